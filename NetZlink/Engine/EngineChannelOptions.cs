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

    internal void Validate()
    {
        if (ReceiveCapacityPerShard < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveCapacityPerShard), ReceiveCapacityPerShard, "EngineChannelOptions.ReceiveCapacityPerShard must be at least 1.");
        }
    }
}
