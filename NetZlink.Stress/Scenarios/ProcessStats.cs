// Reads this process's resident set (now and peak) from /proc (Linux).
namespace NetZlink.Stress.Scenarios;

internal static class ProcessStats
{
    /// <summary>VmHWM of /proc/self/status in bytes, or 0 when it cannot be read.</summary>
    public static long PeakResidentBytes() => StatusBytes("VmHWM:");

    /// <summary>VmRSS of /proc/self/status in bytes (the time series' rss_mb), or 0 when it cannot be read.</summary>
    public static long ResidentBytes() => StatusBytes("VmRSS:");

    /// <summary>VmHWM of another process (an echo server child) in bytes, or 0 when it cannot be read.</summary>
    public static long PeakResidentBytes(int pid) => StatusBytes("VmHWM:", pid);

    /// <summary>VmRSS of another process in bytes, or 0 when it cannot be read.</summary>
    public static long ResidentBytes(int pid) => StatusBytes("VmRSS:", pid);

    private static long StatusBytes(string field, int? pid = null)
    {
        try
        {
            string path = pid is { } id ? $"/proc/{id.ToString(System.Globalization.CultureInfo.InvariantCulture)}/status" : "/proc/self/status";
            foreach (string line in File.ReadLines(path))
            {
                if (line.StartsWith(field, StringComparison.Ordinal))
                {
                    string kb = line[field.Length..].Trim().Split(' ')[0];
                    return long.Parse(kb, System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }

        return 0;
    }
}
