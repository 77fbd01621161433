// The raw zlink C ABI (docs/zlink-abi.md): source-generated, blittable P/Invoke
// declarations and nothing else. No checking happens here; the checked layer is Ensure and the
// public types. This part holds the socket calls the engine drives directly on its hot path, so
// their names and signatures are fixed; the other parts are split by concern.
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe partial class NativeMethods
{
    /// <summary>The one name every declaration binds; <see cref="NativeLibraryResolver"/> maps it to a file.</summary>
    internal const string LibraryName = "zlink";

    // errno is read right after a failed call on the same thread; the call is a thread-local
    // read that never blocks, which is what SuppressGCTransition is for.
    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int zlink_errno();

    [LibraryImport(LibraryName)]
    internal static partial nint zlink_socket(nint ctx, int type);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_close(nint s);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_setsockopt(nint s, int option, void* value, nuint len);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_getsockopt(nint s, int option, void* value, nuint* len);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_bind(nint s, byte* endpointUtf8Nul);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_connect(nint s, byte* endpointUtf8Nul);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_unbind(nint s, byte* endpointUtf8Nul);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_disconnect(nint s, byte* endpointUtf8Nul);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_send(nint socket, byte* buf, nuint len, int flags);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_recv(nint socket, byte* buf, nuint len, int flags);

    // C long is 64-bit on Linux x64, hence nint for the timeout.
    [LibraryImport(LibraryName)]
    internal static partial int zlink_poll(ZlinkPollItem* items, int count, nint timeoutMs);
}
