// The few libc calls the binding needs besides zlink: an eventfd to wake a sleeping shard, a
// timerfd to end a shard's sleep at a handler's exact time, the descriptor limit, and epoll for
// the async reactor (SocketReactor). Linux only, like the rest of the package (runtimes/linux-x64
// and runtimes/linux-arm64).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe partial class LibcMethods
{
    private const string Libc = "libc.so.6";

    internal const int EFD_NONBLOCK = 0x800;
    internal const int EFD_CLOEXEC = 0x80000;
    internal const int RLIMIT_NOFILE = 7;
    internal const int CLOCK_MONOTONIC = 1;
    internal const int TFD_NONBLOCK = 0x800;
    internal const int TFD_CLOEXEC = 0x80000;
    internal const int TFD_TIMER_ABSTIME = 1;
    internal const int TIMER_ABSTIME = 1;
    internal const int EPOLL_CLOEXEC = 0x80000;
    internal const int EPOLL_CTL_ADD = 1;
    internal const int EPOLL_CTL_DEL = 2;
    internal const int EPOLL_CTL_MOD = 3;
    internal const uint EPOLLIN = 0x001;
    internal const uint EPOLLONESHOT = 1u << 30;
    internal const int EINTR = 4;

    /// <summary>
    /// struct epoll_event as the kernel lays it out: packed (12 bytes, data at offset 4) on x86-64,
    /// naturally aligned (16 bytes, data at offset 8) elsewhere. Read and written through
    /// <see cref="EpollEventSize"/> and <see cref="EpollDataOffset"/>.
    /// </summary>
    internal static readonly int EpollEventSize = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 12 : 16;

    /// <summary>Offset of epoll_event.data (see <see cref="EpollEventSize"/>).</summary>
    internal static readonly int EpollDataOffset = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 4 : 8;

    /// <summary>struct timespec on 64-bit Linux.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;

        /// <summary>A CLOCK_MONOTONIC time in nanoseconds (Stopwatch's clock on Linux) as a timespec.</summary>
        public static TimeSpec FromNanoseconds(long nanoseconds) =>
            new() { Seconds = nanoseconds / 1_000_000_000, Nanoseconds = nanoseconds % 1_000_000_000 };
    }

    /// <summary>struct itimerspec: a one-shot timer has a zero interval.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct ITimerSpec
    {
        public TimeSpec Interval;
        public TimeSpec Value;
    }

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
    internal static partial int timerfd_create(int clockId, int flags);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int timerfd_settime(int fd, int flags, ITimerSpec* newValue, ITimerSpec* oldValue);

    /// <summary>Returns the error number itself (not -1 and errno); 0 when the time was reached.</summary>
    [LibraryImport(Libc)]
    internal static partial int clock_nanosleep(int clockId, int flags, TimeSpec* request, TimeSpec* remain);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int getrlimit(int resource, RLimit* limit);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int setrlimit(int resource, RLimit* limit);

    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int epoll_create1(int flags);

    /// <summary><paramref name="epollEvent"/> points at one struct epoll_event (see <see cref="EpollEventSize"/>).</summary>
    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int epoll_ctl(int epfd, int op, int fd, byte* epollEvent);

    /// <summary><paramref name="events"/> holds <paramref name="maxEvents"/> struct epoll_event (see <see cref="EpollEventSize"/>).</summary>
    [LibraryImport(Libc, SetLastError = true)]
    internal static partial int epoll_wait(int epfd, byte* events, int maxEvents, int timeout);
}
