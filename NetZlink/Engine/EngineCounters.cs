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
    long ReceiveBudgetExceeded);
