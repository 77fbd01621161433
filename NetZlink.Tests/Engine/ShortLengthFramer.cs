// A second packet format for the reassembly tests, so they do not only exercise the reference one:
// a 2-byte big-endian header holding the whole packet's length, header included. Lengths below 2
// are left for the reassembler to refuse.
namespace NetZlink.Tests.Engine;

internal sealed class ShortLengthFramer : IPacketFramer
{
    public const int Size = 2;

    public int HeaderSize => Size;

    public int GetPacketLength(ReadOnlySpan<byte> header) => BinaryPrimitives.ReadUInt16BigEndian(header);
}
