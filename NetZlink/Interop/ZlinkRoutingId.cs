// zlink_routing_id_t: { uint8_t size; uint8_t data[255]; } (256 bytes).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

[StructLayout(LayoutKind.Sequential, Size = 256)]
internal unsafe struct ZlinkRoutingId
{
    public byte Size;
    public fixed byte Data[255];

    public readonly ReadOnlySpan<byte> AsSpan()
    {
        fixed (byte* data = Data)
        {
            // The struct lives on the caller's stack or inside a pinned buffer for as long as the
            // span is used; the span is copied out before either goes away.
            return new ReadOnlySpan<byte>(data, Size);
        }
    }
}
