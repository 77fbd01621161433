// Raw declarations: zlink_msg_t, the 64-byte message struct, and its zero-copy constructor.
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe partial class NativeMethods
{
    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_init(ZlinkMsg* msg);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_init_size(ZlinkMsg* msg, nuint size);

    // ffn is a plain C function pointer (zlink_free_fn*); the library may call it from an I/O thread.
    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_init_data(
        ZlinkMsg* msg, void* data, nuint size, delegate* unmanaged[Cdecl]<void*, void*, void> ffn, void* hint);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_send(ZlinkMsg* msg, nint socket, int flags);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_recv(ZlinkMsg* msg, nint socket, int flags);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_close(ZlinkMsg* msg);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_move(ZlinkMsg* dest, ZlinkMsg* src);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_copy(ZlinkMsg* dest, ZlinkMsg* src);

    // Field reads of the struct: tiny and non-blocking.
    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial void* zlink_msg_data(ZlinkMsg* msg);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial nuint zlink_msg_size(ZlinkMsg* msg);

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int zlink_msg_more(ZlinkMsg* msg);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_msg_get(ZlinkMsg* msg, int property);

    [LibraryImport(LibraryName)]
    internal static partial byte* zlink_msg_gets(ZlinkMsg* msg, byte* propertyUtf8Nul);
}
