// Rate limits for the engine's log events that can fire per connection or per packet: each shard
// lets through at most Limit messages of one event per window, counts the rest and reports the
// count (event 1099) with the first message of a later window. Shard thread only: no locks.
using System.Diagnostics;

namespace NetZlink.Engine;

/// <summary>The events a shard rate-limits (index into its gates).</summary>
internal enum GatedEvent
{
    ConnectAttemptFailed,
    ConnectGaveUp,
    Connected,
    Disconnected,
    ProtocolError,
    AcceptRefused,
    PostDropped,
    SlowPeer,
    SendRefused,
    ReceivePaused,
    Reconnecting,
    ReconnectGaveUp,
    IdleTimeout,
}

internal struct LogGate
{
    /// <summary>Messages of one event one shard writes per window at most.</summary>
    internal const int Limit = 10;

    /// <summary>The window, in seconds.</summary>
    internal const int WindowSeconds = 10;

    internal static readonly int Count = Enum.GetValues<GatedEvent>().Length;

    private long _windowStart;
    private int _passed;
    private long _suppressed;

    /// <summary>True when this message may be written; <paramref name="suppressed"/> is how many were left out before it (report them first).</summary>
    internal bool TryPass(long now, out long suppressed)
    {
        suppressed = 0;
        if (_windowStart == 0 || now - _windowStart >= WindowSeconds * Stopwatch.Frequency)
        {
            _windowStart = now;
            _passed = 0;
            suppressed = _suppressed;
            _suppressed = 0;
        }

        if (_passed < Limit)
        {
            _passed++;
            return true;
        }

        _suppressed++;
        suppressed = 0;
        return false;
    }
}
