// The few libc calls the engine needs besides zlink: an eventfd to wake a sleeping shard and the
// descriptor limit. Linux only, like the rest of the package (runtimes/linux-x64).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe partial class LibcMethods
{
    private const string Libc = "libc.so.6";

    internal const int EFD_NONBLOCK = 0x800;
    internal const int EFD_CLOEXEC = 0x80000;
    internal const int RLIMIT_NOFILE = 7;

    [StructLayout(LayoutKind.Sequential)]
    internal struct RLimit
    {
        public ulong Current;
        public ulong Maximum;
    }

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int eventfd(uint initval, int flags);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial nint read(int fd, void* buffer, nuint count);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial nint write(int fd, void* buffer, nuint count);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int close(int fd);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int getrlimit(int resource, RLimit* limit);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int setrlimit(int resource, RLimit* limit);
}
