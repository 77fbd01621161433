// Reads this process's resident set (now and peak) from /proc (Linux).
namespace NetZlink.Stress.Scenarios;

internal static class ProcessStats
{
    /// <summary>VmHWM of /proc/self/status in bytes, or 0 when it cannot be read.</summary>
    public static long PeakResidentBytes() => StatusBytes("VmHWM:");

    /// <summary>VmRSS of /proc/self/status in bytes (the time series' rss_mb), or 0 when it cannot be read.</summary>
    public static long ResidentBytes() => StatusBytes("VmRSS:");

    private static long StatusBytes(string field)
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
            {
                if (line.StartsWith(field, StringComparison.Ordinal))
                {
                    string kb = line[field.Length..].Trim().Split(' ')[0];
                    return long.Parse(kb, System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (IOException)
        {
        }

        return 0;
    }
}
