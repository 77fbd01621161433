// A PacketReassembler sink that allocates nothing: it counts packets and bytes and reads each
// packet's last byte, for the allocation test.
namespace NetZlink.Tests.Engine;

internal struct CountingPacketSink : IPacketSink
{
    public long Packets;
    public long Bytes;
    public long Checksum;

    public bool OnPacket(ReadOnlySpan<byte> packet)
    {
        Packets++;
        Bytes += packet.Length;
        Checksum += packet[^1];
        return true;
    }
}
