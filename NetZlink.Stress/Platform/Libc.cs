// The few libc calls the stress tool makes itself: the open-file limit (a load tool raises it; the
// library never does unless asked) and an absolute-deadline sleep for the open-model pacing.
using System.Runtime.InteropServices;

namespace NetZlink.Stress.Platform;

internal static unsafe partial class Libc
{
    public const int RLIMIT_NOFILE = 7;
    public const int CLOCK_MONOTONIC = 1;
    public const int TIMER_ABSTIME = 1;

    private const string Library = "libc";

    [StructLayout(LayoutKind.Sequential)]
    public struct RLimit
    {
        public ulong Current;
        public ulong Maximum;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;

        public static TimeSpec FromNanoseconds(long nanoseconds)
            => new() { Seconds = nanoseconds / 1_000_000_000, Nanoseconds = nanoseconds % 1_000_000_000 };
    }

    [LibraryImport(Library, SetLastError = true)]
    public static partial int getrlimit(int resource, RLimit* limit);

    [LibraryImport(Library, SetLastError = true)]
    public static partial int setrlimit(int resource, RLimit* limit);

    public const int SIGTERM = 15;

    [LibraryImport(Library, SetLastError = true)]
    public static partial int kill(int pid, int signal);

    [LibraryImport(Library)]
    public static partial int clock_gettime(int clock, TimeSpec* time);

    [LibraryImport(Library)]
    public static partial int clock_nanosleep(int clock, int flags, TimeSpec* request, TimeSpec* remain);
}
