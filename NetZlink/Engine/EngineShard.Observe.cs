// What a shard reports about its connections besides its counters: log events (EngineLog, rate
// limited per shard by LogGate) and spans (EngineTracing). Each hook is one call at its site in
// the shard's code and costs a check or two when nobody logs or listens. Shard thread only.
using System.Diagnostics;
using Microsoft.Extensions.Logging;

namespace NetZlink.Engine;

// Every log call below runs behind Gate, which asks the logger's IsEnabled first.
#pragma warning disable CA1873

public sealed partial class EngineShard
{
    private readonly LogGate[] _logGates = new LogGate[LogGate.Count];

    private ILogger Log => _engine.Logger;

    private string EngineName => _engine.Name;

    /// <summary>The endpoint a connection of this shard uses: its client endpoint, or the server shard's bound one.</summary>
    private string EndpointOf(int slot)
        => _accepting
            ? ((ServerEngine)_engine).BoundEndpoints[Index] ?? _options.Endpoints[Index]
            : _options.Endpoints[_slots[slot].Serial % _options.Endpoints.Count];

    /// <summary>True when an event at <paramref name="level"/> is to be written now (enabled, and within its rate limit).</summary>
    private bool Gate(GatedEvent gated, LogLevel level)
    {
        if (!Log.IsEnabled(level))
        {
            return false;
        }

        if (!_logGates[(int)gated].TryPass(Stopwatch.GetTimestamp(), out long suppressed))
        {
            return false;
        }

        if (suppressed > 0)
        {
            EngineLog.Suppressed(Log, EngineName, Index, suppressed, gated.ToString(), LogGate.WindowSeconds, LogGate.Limit);
        }

        return true;
    }

    private void ObserveAttemptStarted(int slot)
    {
        ref ConnectionSlot s = ref _slots[slot];
        EngineTracing.EndConnect(s.ConnectSpan, "superseded", "superseded");
        s.ConnectSpan = EngineTracing.StartConnect(EngineName, EndpointOf(slot), s.Serial, s.Attempts);
    }

    private void ObserveAttemptFailed(int slot, bool timedOut, int errno, bool final)
    {
        ref ConnectionSlot s = ref _slots[slot];
        if (s.ConnectSpan is { } span)
        {
            EngineTracing.EndConnect(span, FailureText(timedOut, errno), timedOut ? "timeout" : ErrnoName(errno));
            s.ConnectSpan = null;
        }

        if (final)
        {
            if (Gate(GatedEvent.ConnectGaveUp, LogLevel.Warning))
            {
                bool permanent = !timedOut && ConnectErrnoPolicy.IsPermanent(errno);
                EngineLog.GaveUp(Log, EngineName, s.Serial, EndpointOf(slot), s.Attempts, FailureText(timedOut, errno), permanent ? " (an error a retry cannot change)" : string.Empty);
            }
        }
        else if (Gate(GatedEvent.ConnectAttemptFailed, LogLevel.Debug))
        {
            EngineLog.AttemptFailed(Log, EngineName, s.Attempts, s.Serial, EndpointOf(slot), FailureText(timedOut, errno), _options.ConnectRetryDelay.TotalMilliseconds);
        }
    }

    /// <summary>Why an attempt failed, in words (made only when a span or a log message needs it).</summary>
    private string FailureText(bool timedOut, int errno)
        => timedOut ? $"timed out after {_options.ConnectTimeout.TotalMilliseconds:0} ms" : ErrnoText(errno);

    private void ObserveConnected(int slot)
    {
        ref ConnectionSlot s = ref _slots[slot];
        EngineTracing.EndConnect(s.ConnectSpan, failure: null, errorType: null);
        s.ConnectSpan = null;
        if (_accepting)
        {
            EngineTracing.Instant("accept", ActivityKind.Server, EngineName, EndpointOf(slot), s.Serial, peer: false, reason: null, error: false);
        }

        if (Gate(GatedEvent.Connected, LogLevel.Debug))
        {
            EngineLog.Connected(Log, EngineName, s.Serial, EndpointOf(slot));
        }
    }

    private void ObserveAcceptRefused()
    {
        if (Gate(GatedEvent.AcceptRefused, LogLevel.Warning))
        {
            EngineLog.AcceptRefused(Log, EngineName, EndpointOf(0), Index, _options.MaxConnections);
        }
    }

    private void ObserveDisconnected(int slot, ConnectionEndReason reason)
    {
        int connection = _slots[slot].Serial;
        bool error = reason is ConnectionEndReason.ProtocolError or ConnectionEndReason.EngineFault;
        if (EngineTracing.Source.HasListeners())
        {
            EngineTracing.Instant("disconnect", ActivityKind.Internal, EngineName, EndpointOf(slot), connection, peer: !_accepting, reason.ToString(), error);
        }

        if (reason == ConnectionEndReason.Remote && Gate(GatedEvent.Disconnected, LogLevel.Information))
        {
            EngineLog.Disconnected(Log, EngineName, connection, EndpointOf(slot));
        }
        else if (reason == ConnectionEndReason.ProtocolError && Gate(GatedEvent.ProtocolError, LogLevel.Warning))
        {
            EngineLog.ProtocolError(Log, EngineName, connection, EndpointOf(slot));
        }
    }

    private void ObserveIdleTimeout(int slot, long idleTicks)
    {
        if (Gate(GatedEvent.IdleTimeout, LogLevel.Information))
        {
            EngineLog.IdleTimedOut(Log, EngineName, _slots[slot].Serial, EndpointOf(slot), idleTicks * 1000.0 / Stopwatch.Frequency);
        }
    }

    private void ObserveReconnecting(int slot, int round, TimeSpan delay)
    {
        EngineTracing.Reconnect(EngineName, EndpointOf(slot), _slots[slot].Serial, round, delay.TotalMilliseconds, failure: null);
        if (Gate(GatedEvent.Reconnecting, LogLevel.Debug))
        {
            EngineLog.Reconnecting(Log, EngineName, _slots[slot].Serial, EndpointOf(slot), round, delay.TotalMilliseconds);
        }
    }

    private void ObserveReconnectGaveUp(int slot, ConnectFailure failure)
    {
        // The last round's failure in words (the rounds are in the message already).
        string reason = (failure with { Reconnects = 0 }).ToString();
        EngineTracing.Reconnect(EngineName, EndpointOf(slot), _slots[slot].Serial, failure.Reconnects, 0, reason);
        if (Gate(GatedEvent.ReconnectGaveUp, LogLevel.Warning))
        {
            EngineLog.ReconnectGaveUp(Log, EngineName, _slots[slot].Serial, EndpointOf(slot), failure.Reconnects, reason);
        }
    }

    /// <summary>A connect attempt still open when the shard stops: its span ends as failed.</summary>
    private static void ObserveAttemptAbandoned(ref ConnectionSlot s)
    {
        EngineTracing.EndConnect(s.ConnectSpan, "the engine stopped first", "engine_stopped");
        s.ConnectSpan = null;
    }

    private void ObservePostDropped(int slot)
    {
        if (Gate(GatedEvent.PostDropped, LogLevel.Warning))
        {
            EngineLog.PostDropped(Log, EngineName, _slots[slot].Serial);
        }
    }

    private void ObserveSlowPeer(int slot)
    {
        if (Gate(GatedEvent.SlowPeer, LogLevel.Warning))
        {
            EngineLog.SlowPeer(Log, EngineName, _slots[slot].Serial, EndpointOf(slot), _options.HighWaterMark);
        }
    }

    private void ObserveSendRefused(int slot)
    {
        if (Gate(GatedEvent.SendRefused, LogLevel.Warning))
        {
            EngineLog.SendRefused(Log, EngineName, _slots[slot].Serial, EndpointOf(slot), _slots[slot].PendingLength);
        }
    }

    private void ObserveReceivePaused()
    {
        if (Gate(GatedEvent.ReceivePaused, LogLevel.Warning))
        {
            EngineLog.ReceivePaused(Log, EngineName, Index);
        }
    }

    /// <summary>A packet (or a run of them) handed to the handler: a span for the sampled share, when asked for.</summary>
    private void ObserveReceived(int slot, int bytes)
    {
        if (EngineTracing.SampleMessage(_options.MessageTraceSampleRatio))
        {
            EngineTracing.Message("receive", ActivityKind.Consumer, EngineName, EndpointOf(slot), _slots[slot].Serial, peer: !_accepting, bytes);
        }
    }

    /// <summary>A posted frame accepted for a connection (any thread): a span for the sampled share, when asked for.</summary>
    internal void ObservePosted(Connection connection, int bytes)
    {
        if (EngineTracing.SampleMessage(_options.MessageTraceSampleRatio))
        {
            string endpoint = _accepting ? EndpointOf(connection.Slot) : _options.Endpoints[connection.Index % _options.Endpoints.Count];
            EngineTracing.Message("send", ActivityKind.Producer, EngineName, endpoint, connection.Index, peer: !_accepting, bytes);
        }
    }

    private static string ErrnoName(int errno) => errno == 0 ? "unknown" : ((ZlinkError)errno).ToString();

    private static string ErrnoText(int errno) => errno == 0 ? "no reason given (errno 0)" : $"{ErrnoName(errno)} (errno {errno})";
}
