// zlink_msg_t: an opaque, pointer-aligned 64-byte struct. Only its size and alignment matter
// here; the library owns its contents.
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

[InlineArray(8)]
internal struct ZlinkMsg
{
    // Eight 8-byte elements give both the 64 bytes and the pointer alignment the ABI asks for.
    private ulong _element0;
}
