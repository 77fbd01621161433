// Engine-wide counters, summed over shards at the moment of the call.
namespace NetZlink.Engine;

/// <summary>A snapshot of an engine's counters (each shard's own, summed; read without locks).</summary>
public readonly record struct EngineCounters(
    long Connected,
    long ConnectFailed,
    long ConnectTimedOut,
    long PacketsReceived,
    long BytesReceived,
    long FramesSent,
    long BytesSent,
    long FramesQueued,
    long ProtocolErrors,
    long Disconnects,
    long LostPartialBytes,
    long ReceiveBudgetExceeded)
{
    /// <summary>Reconnect rounds scheduled for connections that ended (<see cref="EngineOptions.Reconnect"/>).</summary>
    public long Reconnects { get; init; }

    /// <summary>Connections whose reconnect rounds ran out (also counted in <see cref="ConnectFailed"/> or <see cref="ConnectTimedOut"/>).</summary>
    public long ReconnectsGaveUp { get; init; }

    /// <summary>Connections closed because nothing arrived for <see cref="EngineOptions.IdleTimeout"/>.</summary>
    public long IdleTimeouts { get; init; }
}
