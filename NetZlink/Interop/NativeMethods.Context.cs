// Raw declarations: contexts and library-wide queries (version, error text, capabilities).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe partial class NativeMethods
{
    [LibraryImport(LibraryName)]
    internal static partial nint zlink_ctx_new();

    [LibraryImport(LibraryName)]
    internal static partial int zlink_ctx_term(nint ctx);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_ctx_shutdown(nint ctx);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_ctx_set(nint ctx, int option, int value);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_ctx_get(nint ctx, int option);

    [LibraryImport(LibraryName)]
    internal static partial byte* zlink_strerror(int errnum);

    [LibraryImport(LibraryName)]
    internal static partial void zlink_version(int* major, int* minor, int* patch);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_has(byte* capabilityUtf8Nul);
}
