// When this process started, on the clock packets are timed with (LoadPlan.NowNanoseconds), for
// the cold-start fields (startup_to_connected_ms, startup_to_first_echo_ms). Two sources:
//   - NETZLINK_STRESS_LAUNCHED_AT: Unix seconds with decimals (bash's $EPOCHREALTIME; `compare`
//     sets it for each child just before starting it): the moment the launcher started the process,
//     to the microsecond, so the runtime's own start-up is inside the figure;
//   - otherwise the kernel's start time of the process (/proc/self/stat, field 22, in clock ticks
//     since boot: 10 ms steps), against CLOCK_BOOTTIME.
// limit_echo.c does the same in C, so the three stacks' figures count from the same moment.
using System.Globalization;

namespace NetZlink.Stress.Platform;

/// <summary>This process's start time.</summary>
internal static class ProcessStart
{
    /// <summary>The variable a launcher sets to its Unix time (seconds, decimals allowed) just before starting this process.</summary>
    public const string LaunchedAtVariable = "NETZLINK_STRESS_LAUNCHED_AT";

    private const int ClockBoottime = 7;
    private const long ClockTicksPerSecond = 100;

    private static readonly Lazy<long> StartNs = new(Compute);

    /// <summary>The process's start on <see cref="Scenarios.LoadPlan.NowNanoseconds"/>' clock; 0 when it cannot be told.</summary>
    public static long MonotonicNs => StartNs.Value;

    /// <summary>Milliseconds from the process's start to <paramref name="atNs"/> (same clock); 0 when either is unknown.</summary>
    public static double MillisecondsTo(long atNs) => atNs <= 0 || MonotonicNs <= 0 ? 0 : Math.Max(0, atNs - MonotonicNs) / 1e6;

    /// <summary>The value of <see cref="LaunchedAtVariable"/> for a process started now.</summary>
    public static string LaunchedAtNow() =>
        ((DateTime.UtcNow - DateTime.UnixEpoch).Ticks / (double)TimeSpan.TicksPerSecond).ToString("F6", CultureInfo.InvariantCulture);

    /// <summary>
    /// The age of a process launched at <paramref name="launchedAt"/> (Unix seconds, as the variable holds it) at <paramref name="nowUnixSeconds"/>;
    /// null when the text is not such a time or lies in the future by more than a second (a clock step).
    /// </summary>
    public static double? AgeSeconds(string? launchedAt, double nowUnixSeconds)
    {
        if (!double.TryParse(launchedAt, NumberStyles.Float, CultureInfo.InvariantCulture, out double at) || !double.IsFinite(at) || at <= 0)
        {
            return null;
        }

        double age = nowUnixSeconds - at;
        return age < -1 ? null : Math.Max(0, age);
    }

    private static long Compute()
    {
        long now = Scenarios.LoadPlan.NowNanoseconds();
        double unixNow = (DateTime.UtcNow - DateTime.UnixEpoch).TotalSeconds;
        if (AgeSeconds(Environment.GetEnvironmentVariable(LaunchedAtVariable), unixNow) is { } age)
        {
            return now - (long)(age * 1e9);
        }

        return KernelAgeNs() is { } kernelAge ? now - kernelAge : 0;
    }

    /// <summary>The process's age from /proc/self/stat and CLOCK_BOOTTIME; null when either cannot be read.</summary>
    private static unsafe long? KernelAgeNs()
    {
        try
        {
            string stat = File.ReadAllText("/proc/self/stat");
            // Field 2 (the command) is in parentheses and may hold spaces: count from after its ')'.
            string[] rest = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            long startTicks = long.Parse(rest[19], CultureInfo.InvariantCulture); // field 22
            Libc.TimeSpec boot;
            if (Libc.clock_gettime(ClockBoottime, &boot) != 0)
            {
                return null;
            }

            long bootNs = (boot.Seconds * 1_000_000_000) + boot.Nanoseconds;
            return Math.Max(0, bootNs - (startTicks * (1_000_000_000 / ClockTicksPerSecond)));
        }
        catch (Exception e) when (e is IOException or FormatException or IndexOutOfRangeException or ArgumentOutOfRangeException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
