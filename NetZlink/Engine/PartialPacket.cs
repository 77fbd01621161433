// The per-connection state of PacketReassembler: the bytes of a packet that spans reads. A plain
// struct so a shard keeps it inside its ConnectionSlot array (no object per connection); the
// buffer comes from the reassembler's pool and goes back to it (PacketReassembler.Release).
namespace NetZlink.Engine;

/// <summary>A connection's packet in progress for <see cref="PacketReassembler"/>: keep one per connection, starting as <c>default</c>.</summary>
internal struct PartialPacket
{
    /// <summary>The gathered bytes; null when the stream is at a packet boundary.</summary>
    internal byte[]? Buffer;

    /// <summary>Bytes gathered so far (header included).</summary>
    internal int Gathered;

    /// <summary>The whole packet's length once its header is complete, else 0.</summary>
    internal int Expected;

    /// <summary>Bytes of the packet in progress gathered so far (0 at a packet boundary).</summary>
    public readonly int Length => Gathered;

    /// <summary>True when no packet is in progress.</summary>
    public readonly bool IsEmpty => Gathered == 0;
}
