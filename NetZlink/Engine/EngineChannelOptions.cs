// Tuning of an EngineChannel.
namespace NetZlink.Engine;

/// <summary>Options of <see cref="StreamEngine.StartChannel"/>.</summary>
public sealed class EngineChannelOptions
{
    /// <summary>
    /// Packets a shard may have waiting in the reader before it stops reading its connections
    /// (default 4,096). It reads again once the reader has taken half of them. A shard finishes
    /// the read it is in when it stops, so up to one read's packets
    /// (<see cref="EngineOptions.ReceiveChunkSize"/> bytes) may come on top. Connection events
    /// never count and are never held back by it.
    /// </summary>
    public int ReceiveCapacityPerShard { get; init; } = 4096;

    /// <summary>
    /// Bytes of packets a shard may have waiting in the reader before it stops reading its
    /// connections (default 64 MiB), alongside <see cref="ReceiveCapacityPerShard"/>: whichever is
    /// reached first pauses the shard, and it reads again once both are at half or below. A packet
    /// is never refused for its size: the pause comes after the packet that reached the mark, so
    /// up to one read (or one packet, when it is larger) may come on top.
    /// </summary>
    public long ReceiveBytesPerShard { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// When true, each connection is an <see cref="System.IO.Pipelines.IDuplexPipe"/> (given with its
    /// <see cref="EngineEventKind.Connected"/> event as <see cref="EngineEvent.Pipe"/>): its packets go
    /// to the pipe's <c>Input</c> instead of the reader (no <see cref="EngineEventKind.Packet"/>
    /// events), and what the application writes and flushes to its <c>Output</c> is posted to the
    /// connection. Default false.
    /// </summary>
    public bool ConnectionPipes { get; init; }

    /// <summary>
    /// With <see cref="ConnectionPipes"/>: unread bytes a connection's input pipe holds before its
    /// shard stops reading (until the application has read half of them), and unsent bytes its
    /// output pipe holds before the application's flush waits. Default 64 KiB.
    /// </summary>
    public int PipeCapacity { get; init; } = 64 * 1024;

    internal void Validate()
    {
        if (PipeCapacity < 2)
        {
            throw new ArgumentOutOfRangeException(nameof(PipeCapacity), PipeCapacity, "EngineChannelOptions.PipeCapacity must be at least 2.");
        }

        if (ReceiveBytesPerShard < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveBytesPerShard), ReceiveBytesPerShard, "EngineChannelOptions.ReceiveBytesPerShard must be at least 1.");
        }

        if (ReceiveCapacityPerShard < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveCapacityPerShard), ReceiveCapacityPerShard, "EngineChannelOptions.ReceiveCapacityPerShard must be at least 1.");
        }
    }
}
