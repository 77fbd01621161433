// A PacketReassembler sink for tests: copies every packet it is handed into a list, and asks the
// reassembler to stop once the list holds stopAfter packets.
namespace NetZlink.Tests.Engine;

internal readonly struct RecordingPacketSink(List<byte[]> packets, int stopAfter = int.MaxValue) : IPacketSink
{
    public bool OnPacket(ReadOnlySpan<byte> packet)
    {
        packets.Add(packet.ToArray());
        return packets.Count < stopAfter;
    }
}
