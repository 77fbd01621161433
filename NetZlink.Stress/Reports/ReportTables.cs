// The report's tables as text cells, built once and rendered by both the Markdown and the HTML
// report: the runs (one row per stack and scenario, with ResultSchema's report fields) and the ratios.
using System.Globalization;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Reports;

/// <summary>Builds the report's tables from a <see cref="CompareReport"/>.</summary>
internal static class ReportTables
{
    /// <summary>The run table's fields: ResultSchema's Report columns, by their summary.json names.</summary>
    private static readonly IReadOnlyList<ResultField> Columns = ResultSchema.In(FieldFormats.Report);

    /// <summary>What the client columns of <see cref="Runs"/> count.</summary>
    public const string ClientUsageNote =
        "cpu_s is the client process's CPU time over its whole run (connect, warm-up, measured phase, drain) on every core; peak_rss_mb its peak resident memory.";

    /// <summary>Per stack and scenario: the schema's report fields and the ratios to the baseline stack.</summary>
    public static ReportTable Runs(CompareReport report)
    {
        string b = CompareStacks.Baseline;
        string[] header = ["stack", "scenario", .. Columns.Select(c => c.Name), $"throughput / {b}", $"p99 / {b}"];
        var rows = new List<IReadOnlyList<string>>();
        foreach (string scenario in report.Scenarios)
        {
            foreach (string stack in report.Stacks)
            {
                if (report.Find(stack, scenario) is not { } run)
                {
                    continue;
                }

                if (run.Summary is not { } s)
                {
                    string status = run.Skip is null ? "NO RESULT" : "SKIP";
                    rows.Add([stack, scenario, .. Columns.Select(c => c == ResultSchema.PassFail ? status : "-"), "n/a", "n/a"]);
                    continue;
                }

                rows.Add(
                [
                    stack, scenario, .. Columns.Select(c => s.Text(c.Name)),
                    Ratios.Format(Ratios.Throughput(report, stack, b, scenario)),
                    Ratios.Format(Ratios.P99(report, stack, b, scenario)),
                ]);
            }
        }

        return new ReportTable(header, rows);
    }

    /// <summary>The cold-start table's columns: the client's start and first echoes beside the steady state's median.</summary>
    private static readonly string[] ColdStartColumns =
        ["startup_to_connected_ms", "startup_to_first_echo_ms", "first_n", "first_n_p50_us", "first_n_max_us", "p50_us"];

    /// <summary>The server-time table's columns: each server percentile beside the client's round trip.</summary>
    private static readonly string[] ServerTimeColumns =
        ["p50_us", "server_p50_us", "p99_us", "server_p99_us", "max_us", "server_max_us", "server_samples"];

    /// <summary>What the cold-start table shows.</summary>
    public const string ColdStartNote =
        "Times from the client process's start (compare stamps each client as it launches it) to its first connection and to its first echo; first_n_p50_us and first_n_max_us are the round trips of the run's first first_n echoes (at most 100, warm-up included, every one timed), p50_us the measured phase's median (s0: its one echo, timed separately from first_n_p50_us, so the two are close but not the same number).";

    /// <summary>What the server-time table shows.</summary>
    public const string ServerTimeNote =
        "server_*: the echo server's own time per read, from the read to its echo handed to the socket or engine (every latency-sample-rate-th read of a connection, its first included), beside the client's round trip. The server's clock stops after its send returns, and on loopback that send already delivers the echo, so one sample of the server's time can exceed the client's round trip; in the main it is a part of it.";

    /// <summary>Per stack and scenario: how the run started (see <see cref="ColdStartNote"/>).</summary>
    public static ReportTable ColdStart(CompareReport report) => FieldTable(report, ColdStartColumns);

    /// <summary>Per stack and scenario: server time beside round trip (see <see cref="ServerTimeNote"/>).</summary>
    public static ReportTable ServerTime(CompareReport report) => FieldTable(report, ServerTimeColumns);

    private static ReportTable FieldTable(CompareReport report, IReadOnlyList<string> fields)
    {
        var rows = new List<IReadOnlyList<string>>();
        foreach (string scenario in report.Scenarios.Where(s => CompareTransports.Split(s).Scenario != "s1"))
        {
            foreach (string stack in report.Stacks)
            {
                if (report.Find(stack, scenario) is { } run)
                {
                    rows.Add([stack, scenario, .. fields.Select(f => run.Summary is { } s ? NonEmpty(s.Text(f)) ?? "-" : "-")]);
                }
            }
        }

        return new ReportTable(["stack", "scenario", .. fields], rows);
    }

    /// <summary>Per scenario: netzlink over dotnet, over c-epoll and over c-uring, throughput and p99.</summary>
    public static ReportTable RatioTable(CompareReport report)
    {
        string n = StackNames.Netzlink, d = StackNames.Dotnet, c = CompareStacks.CEpoll, u = CompareStacks.CUring;
        string[] header =
        [
            "scenario", $"{n}/{d} throughput", $"{n}/{d} p99", $"{n}/{c} throughput", $"{n}/{c} p99", $"{d}/{c} throughput",
            $"{n}/{u} throughput", $"{n}/{u} p99",
        ];
        var rows = new List<IReadOnlyList<string>>();
        foreach (string scenario in report.Scenarios.Where(s => CompareTransports.Split(s).Scenario != "s1"))
        {
            rows.Add(
            [
                scenario,
                Ratios.Format(Ratios.Throughput(report, n, d, scenario)),
                Ratios.Format(Ratios.P99(report, n, d, scenario)),
                Ratios.Format(Ratios.Throughput(report, n, c, scenario)),
                Ratios.Format(Ratios.P99(report, n, c, scenario)),
                Ratios.Format(Ratios.Throughput(report, d, c, scenario)),
                Ratios.Format(Ratios.Throughput(report, n, u, scenario)),
                Ratios.Format(Ratios.P99(report, n, u, scenario)),
            ]);
        }

        return new ReportTable(header, rows);
    }

    /// <summary>
    /// What each transport costs on one stack: per .NET stack and run over tls, ws or wss, its throughput and p99 over
    /// those of the same scenario over tcp on the same stack (throughput below 1: slower than tcp). Empty when the
    /// compare ran tcp only.
    /// </summary>
    public static ReportTable TransportCostTable(CompareReport report)
    {
        string[] header = ["stack", "scenario", "transport", "throughput/tcp", "p99/tcp"];
        var rows = new List<IReadOnlyList<string>>();
        foreach (string stack in report.Stacks.Where(CompareStacks.IsDotnetProcess))
        {
            foreach (string label in report.Scenarios)
            {
                (string transport, string scenario) = CompareTransports.Split(label);
                if (transport == CompareTransports.Tcp || scenario == "s1")
                {
                    continue;
                }

                rows.Add(
                [
                    stack, label, transport,
                    Ratios.Format(Ratios.Of(report.Summary(stack, label)?.Throughput, report.Summary(stack, scenario)?.Throughput)),
                    Ratios.Format(Ratios.Of(report.Summary(stack, label)?.P99, report.Summary(stack, scenario)?.P99)),
                ]);
            }
        }

        return new ReportTable(header, rows);
    }

    /// <summary>What <see cref="TransportCostTable"/> shows.</summary>
    public const string TransportCostNote =
        "Each transport's cost on one stack: a run's figure over the same scenario's over tcp on the same stack (throughput below 1 and p99 above 1: the transport costs that much). netzlink against dotnet per transport is in the ratio table above.";

    /// <summary>The flags every run shared, as "name value" pairs.</summary>
    public static IReadOnlyList<(string Name, string Value)> Settings(ScenarioSettings s) =>
    [
        ("ccu", I(s.Ccu)), ("size", I(s.Size)), ("inflight", I(s.Inflight)),
        ("warmup", D(s.WarmupSeconds)), ("measure", D(s.MeasureSeconds)), ("drain-timeout", D(s.DrainTimeoutSeconds)),
        ("connect-concurrency", I(s.ConnectConcurrency)), ("connect-timeout", D(s.ConnectTimeoutSeconds)),
        ("connect-retries", I(s.ConnectRetries)), ("send-batch", I(s.SendBatch)),
        ("latency-sample-rate", I(s.LatencySampleRate)), ("sndbuf", I(s.SendBuffer)), ("rcvbuf", I(s.ReceiveBuffer)),
        ("backlog", I(s.Backlog)), ("hwm (.NET only)", I(s.Hwm)), ("shards (.NET only)", s.Shards == 0 ? "one per core" : I(s.Shards)),
        .. s.Rate > 0 ? [("rate (s2-open only)", D(s.Rate))] : Array.Empty<(string, string)>(),
    ];

    /// <summary>The notes under the run table: stacks skipped, the s2-open rows (--rate), c-epoll and c-uring beside runs over tls, ws or wss, and skipped runs, when the compare has them.</summary>
    public static IEnumerable<string> RunNotes(CompareReport report)
    {
        foreach (string skipped in report.Skipped)
        {
            yield return skipped;
        }

        if (OpenModelNote(report) is { } open)
        {
            yield return open;
        }

        if ((report.Stacks.Contains(CompareStacks.CEpoll) || report.Stacks.Contains(CompareStacks.CUring)) && report.Scenarios.Any(s => CompareTransports.Split(s).Transport != CompareTransports.Tcp))
        {
            yield return CompareTransports.CEpollTcpOnlyNote;
        }

        foreach (CompareRun skipped in report.Runs.Where(r => r.Skip is not null))
        {
            yield return $"{skipped.Stack} {skipped.Scenario}: SKIP ({skipped.Skip}).";
        }
    }

    /// <summary>What the s2-open rows are, when the compare has them (--rate); null otherwise.</summary>
    public static string? OpenModelNote(CompareReport report) =>
        report.Scenarios.Any(s => CompareTransports.Split(s).Scenario == CompareTransports.OpenScenario)
            ? string.Create(CultureInfo.InvariantCulture,
                $"{CompareTransports.OpenScenario}: s2 as an open model at {report.Settings.Rate:0.###} packets/s over all connections (--rate): each packet leaves at its due time, --inflight stays a cap, and its latency counts from the due time, so a stall shows in the percentiles; late = measured packets the cap or a full send queue held past their due time. The other rows are closed-loop (rate 0). c-epoll's s2-open row is limit_echo --rate, the same schedule in C.")
            : null;

    /// <summary>Runs that failed, with why (their reason, or what went wrong around them).</summary>
    public static IReadOnlyList<string> Problems(CompareReport report) =>
        report.Runs.Where(r => !r.Passed)
            .Select(r => $"{r.Stack} {r.Scenario}: {r.Error ?? NonEmpty(r.Summary?.Text("reason")) ?? r.Summary?.PassFail ?? "no result"}")
            .ToArray();

    private static string? NonEmpty(string? text) => string.IsNullOrEmpty(text) ? null : text;

    private static string I(int v) => v.ToString(CultureInfo.InvariantCulture);

    private static string D(double v) => v.ToString("0.###", CultureInfo.InvariantCulture);
}
