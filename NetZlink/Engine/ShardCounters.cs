// One shard's counters: written only by the shard's thread, read by others with Volatile.Read
// (64-bit reads do not tear on the 64-bit platforms NetZlink supports).
namespace NetZlink.Engine;

internal struct ShardCounters
{
    public long Connected;
    public long ConnectFailed;
    public long ConnectTimedOut;
    public long PacketsReceived;
    public long BytesReceived;
    public long FramesSent;
    public long BytesSent;
    public long FramesQueued;
    public long ProtocolErrors;
    public long Disconnects;
    public long LostPartialBytes;
    public long ReceiveBudgetExceeded;
    public long PostsSent;
    public long PostsDroppedClosed;
    public long PostsDroppedStopped;
    public long PostsDroppedDeadline;
    public long Reconnects;
    public long ReconnectsGaveUp;
    public long IdleTimeouts;
}
