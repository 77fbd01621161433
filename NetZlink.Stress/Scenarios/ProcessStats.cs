// Reads this process's peak resident set from /proc (Linux).
namespace NetZlink.Stress.Scenarios;

internal static class ProcessStats
{
    /// <summary>VmHWM of /proc/self/status in bytes, or 0 when it cannot be read.</summary>
    public static long PeakResidentBytes()
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
            {
                if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
                {
                    string kb = line["VmHWM:".Length..].Trim().Split(' ')[0];
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
