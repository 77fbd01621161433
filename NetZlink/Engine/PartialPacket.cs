// The per-connection state of PacketReassembler: the bytes of a packet that spans reads. A plain
// struct so a shard keeps it inside its ConnectionSlot array (no object per connection); the
// buffer comes from the reassembler's pool and goes back to it (PacketReassembler.Release).
namespace NetZlink.Engine;

internal struct PartialPacket
{
    /// <summary>The gathered bytes; null when the stream is at a packet boundary.</summary>
    public byte[]? Buffer;

    /// <summary>Bytes gathered so far (header included).</summary>
    public int Length;

    /// <summary>The whole packet's length once its header is complete, else 0.</summary>
    public int Expected;

    /// <summary>True when no packet is in progress.</summary>
    public readonly bool IsEmpty => Length == 0;
}
