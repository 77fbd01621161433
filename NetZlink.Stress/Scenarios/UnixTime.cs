// Wall-clock time as Unix seconds: what --start-at takes (`date +%s`) and what a run records as the
// start of its measured phase, so that runs on several hosts can be lined up and compared.
namespace NetZlink.Stress.Scenarios;

/// <summary>The wall clock in Unix seconds, with sub-second precision.</summary>
internal static class UnixTime
{
    /// <summary>Seconds since 1970-01-01T00:00:00Z, now.</summary>
    public static double Now => (DateTime.UtcNow - DateTime.UnixEpoch).TotalSeconds;
}
