// Hand-built results of client hosts, with latency histograms, written as --json-histogram files.

namespace NetZlink.Stress.Tests.Merge;

internal static class SampleHosts
{
    /// <summary>A PASS s2 host run of <paramref name="ccu"/> connections whose latencies come from <paramref name="seed"/>.</summary>
    public static ScenarioResult Host(int ccu, int seed, ScenarioSettings? settings = null)
    {
        var result = new ScenarioResult
        {
            Settings = (settings ?? new ScenarioSettings { Scenario = "s2", Size = 1024, Inflight = 30, MeasureSeconds = 2 }) with { Ccu = ccu, StartAt = 1_800_000_000 },
            ConnectSuccess = ccu,
            Sent = 1000L * ccu,
            Recv = 1000L * ccu,
            Throughput = 500.0 * ccu + 0.123,
            PassFail = "PASS",
            CpuSeconds = 1.25,
            PeakRssBytes = (100 + ccu) * 1024L * 1024,
            ShardCount = 2,
            MeasureStartedAt = 1_800_000_001.5 + (seed / 100.0),
        };
        result.SetLatency(Histograms.Filled(seed, 5_000));
        return result;
    }

    /// <summary>Writes <paramref name="result"/> as a single run's --summary-json with --json-histogram.</summary>
    public static string Write(string path, ScenarioResult result)
    {
        SummaryJsonFile.Write(path, [result], asArray: false, withHistogram: true);
        return path;
    }
}
