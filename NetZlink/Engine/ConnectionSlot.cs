// Per-connection state a shard keeps in one array: connect progress, receive reassembly and the
// send retry buffer. A struct, so 10,000 connections cost one allocation per shard.
namespace NetZlink.Engine;

internal struct ConnectionSlot
{
    /// <summary>The routing id of the current attempt: generation in the top byte, slot below.</summary>
    public uint RoutingId;
    public ConnectionState State;
    public byte Generation;
    public bool InWaitList;
    public bool LastTimedOut;
    public int Attempts;
    public int LastErrno;

    /// <summary>Connect deadline while Connecting, next attempt time while RetryWait (Stopwatch ticks).</summary>
    public long DeadlineTicks;

    /// <summary>Bytes of a packet that spans reads; null when the stream is at a packet boundary.</summary>
    public byte[]? Partial;
    public int PartialLength;

    /// <summary>Whole packet length once its header is known, else 0.</summary>
    public int PartialExpected;

    /// <summary>Frames the socket refused (EAGAIN at SNDHWM), kept in order for the next passes.</summary>
    public byte[]? Pending;
    public int PendingLength;
}
