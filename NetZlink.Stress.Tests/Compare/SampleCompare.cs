// A compare report built from real summary.json files: SampleResults written by the tool's own
// JSON writer for each stack, with throughputs and p99s chosen so every ratio is easy to check.

namespace NetZlink.Stress.Tests.Compare;

internal static class SampleCompare
{
    /// <summary>s2 throughput per stack (packets/s).</summary>
    public static readonly Dictionary<string, double> Throughput = new()
    {
        ["netzlink"] = 300_000, ["dotnet"] = 600_000, ["c-epoll"] = 1_200_000, ["c-uring"] = 1_500_000,
    };

    /// <summary>s2 p99 per stack (µs).</summary>
    public static readonly Dictionary<string, double> P99 = new()
    {
        ["netzlink"] = 4000, ["dotnet"] = 2000, ["c-epoll"] = 1000, ["c-uring"] = 800,
    };

    /// <summary>s1 and s2 for every stack; dotnet's s1 FAILs with a reason.</summary>
    public static CompareReport Build(TempDirectory temp)
    {
        var runs = new List<CompareRun>();
        foreach (string stack in CompareStacks.All)
        {
            ScenarioResult s1 = SampleResults.Pass();
            s1 = new ScenarioResult { Settings = s1.Settings with { Scenario = "s1" }, Stack = stack, ConnectSuccess = 200, PassFail = "PASS" };
            if (stack == "dotnet")
            {
                s1.PassFail = "FAIL";
                s1.Reason = "connected 150 of 200 (failed 50, timed out 0)";
            }

            ScenarioResult s2 = SampleResults.Pass();
            s2 = new ScenarioResult
            {
                Settings = s2.Settings,
                Stack = stack,
                ConnectSuccess = 200,
                Sent = 1000,
                Recv = 1000,
                Throughput = Throughput[stack],
                P50Us = P99[stack] / 4,
                P95Us = P99[stack] / 2,
                P99Us = P99[stack],
                P999Us = P99[stack] * 2,
                CpuSeconds = 1.25,
                PeakRssBytes = 40 * 1024 * 1024,
                PassFail = "PASS",
            };
            runs.Add(Run(temp, stack, "s1", s1, []));
            runs.Add(Run(temp, stack, "s2", s2, [new(1, "warmup", 100, 90, 30), new(2, "measure", Throughput[stack], Throughput[stack], 30)]));
        }

        return new CompareReport(new ScenarioSettings { Ccu = 200 }, CompareStacks.All, ["s1", "s2"], runs, "NetZlink.Stress compare --ccu 200", new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc));
    }

    /// <summary>netzlink and dotnet runs with the given labels (s2, ws-s2, ...), throughputs and p99s; the scenarios in first-seen order.</summary>
    public static CompareReport WithTransports(TempDirectory temp, params (string Stack, string Label, double Throughput, double P99)[] rows)
    {
        var runs = rows.Select(r => Run(temp, r.Stack, r.Label, new ScenarioResult
        {
            Settings = SampleResults.Pass().Settings,
            Stack = r.Stack,
            ConnectSuccess = 10,
            Sent = 100,
            Recv = 100,
            Throughput = r.Throughput,
            P99Us = r.P99,
            PassFail = "PASS",
        }, [])).ToList();
        string[] scenarios = rows.Select(r => r.Label).Distinct().ToArray();
        return new CompareReport(new ScenarioSettings { Ccu = 10 }, ["netzlink", "dotnet"], scenarios, runs, "NetZlink.Stress compare", new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc));
    }

    private static CompareRun Run(TempDirectory temp, string stack, string scenario, ScenarioResult result, IReadOnlyList<TimeseriesPoint> series)
    {
        string path = temp.File($"{stack}-{scenario}.json");
        SummaryJsonFile.Write(path, [result], asArray: false);
        return new CompareRun(stack, scenario, RunSummary.Read(path), series, null);
    }
}
