// THE result schema: one row per field, in output order, with its type, unit, decimals, how
// `merge` combines several hosts' values and which formats carry it. Everything that writes or
// reads a result goes through this table: the RESULT and METRIC lines (ResultLines), the CSV
// (MetricsCsvFile), the JSON and its merge_input object (SummaryJsonFile, MergeInputJson), the
// compare report's run table (Reports/ReportTables), and `merge`, which reads a host's file back
// (Merge/HostSummary) and combines hosts (Merge/HostMerger) field by field as the table says.
// docs/scenarios.md's field table shows the same rows (a test holds the two together).
//
// Adding a field: one row here, plus what computes it (a counter in the stacks, a property of
// ScenarioResult). A field the table can read back (it has a setter) is stored in summary files
// and merged by its rule; one without is computed again after a merge (Histogram, Derived, Judged).
using NetZlink.Stress.Scenarios;
using static NetZlink.Stress.Output.FieldFormats;
using static NetZlink.Stress.Output.MergeRule;

namespace NetZlink.Stress.Output;

/// <summary>Every output field, in output order.</summary>
internal static class ResultSchema
{
    private const double MiB = 1024.0 * 1024.0;

    /// <summary>The CSV, the JSON and both lines.</summary>
    private const FieldFormats All = Result | Metric | Csv | Json;

    /// <summary>The METRIC line, the CSV and the JSON (not RESULT).</summary>
    private const FieldFormats MetricAndFiles = Metric | Csv | Json;

    public static readonly ResultField Throughput = Number("throughput", "packets/s", 2, Sum, All | Report | MergeInput, r => r.Throughput, (r, v) => r.Throughput = v);
    public static readonly ResultField P50Us = Number("p50_us", "µs", 2, Histogram, All | Report, r => r.P50Us, null);
    public static readonly ResultField P95Us = Number("p95_us", "µs", 2, Histogram, All | Report, r => r.P95Us, null);
    public static readonly ResultField P99Us = Number("p99_us", "µs", 2, Histogram, All | Report, r => r.P99Us, null);
    public static readonly ResultField PassFail = Text("pass_fail", "", Judged, All | Report, r => r.PassFail, null);
    public static readonly ResultField P999Us = Number("p999_us", "µs", 2, Histogram, All | Report, r => r.P999Us, null);
    public static readonly ResultField Reason = new("reason", FieldType.Note, "", 0, Judged, All,
        r => FieldValue.Of(r.PassFail == "PASS" ? null : r.Reason), null);

    /// <summary>The echo server's own figures (its SERVER_TIME line), which a parent adds to the client's result.</summary>
    public static IReadOnlyList<ResultField> ServerFields => Fields.Where(f => ServerTimeNames.Contains(f.Name)).ToArray();

    // The echo server's own receive-to-send figures (not server_kb_per_conn or the stored growth,
    // which come from the run's processes, not from the server's SERVER_TIME line).
    private static readonly string[] ServerTimeNames = ["server_samples", "server_p50_us", "server_p99_us", "server_max_us"];

    /// <summary>The table.</summary>
    public static readonly IReadOnlyList<ResultField> Fields =
    [
        Text("scenario", "", Same, Result | MergeInput, r => r.Settings.Scenario, (r, v) => r.Settings = r.Settings with { Scenario = v ?? "" }),
        Text("scenario_id", "", Common, MetricAndFiles, ScenarioId, (r, v) => r.Settings = r.Settings with { ScenarioId = v }),
        Text("transport", "", Same, All, r => r.Settings.Transport, (r, v) => r.Settings = r.Settings with { Transport = v ?? "" }),
        Count("ccu", "connections", Sum, All | Report, r => r.Settings.Ccu, (r, v) => r.Settings = r.Settings with { Ccu = checked((int)v) }),
        Count("inflight", "packets", Same, All | Report, r => r.Settings.Inflight, (r, v) => r.Settings = r.Settings with { Inflight = checked((int)v) }),
        Count("size", "bytes", Same, All | Report, r => r.Settings.Size, (r, v) => r.Settings = r.Settings with { Size = checked((int)v) }),
        Count("connect_success", "connections", Sum, All | Report, r => r.ConnectSuccess, (r, v) => r.ConnectSuccess = v),
        Count("connect_fail", "connections", Sum, All | Report, r => r.ConnectFail, (r, v) => r.ConnectFail = v),
        Count("connect_timeout", "connections", Sum, All | Report, r => r.ConnectTimeout, (r, v) => r.ConnectTimeout = v),
        Count("sent", "packets", Sum, All | Report, r => r.Sent, (r, v) => r.Sent = v),
        Count("recv", "packets", Sum, All | Report, r => r.Recv, (r, v) => r.Recv = v),
        Number("incomplete_ratio", "", 6, Derived, All | Report, r => r.IncompleteRatio, null),
        Throughput,
        P50Us,
        P95Us,
        P99Us,
        new("errors_by_errno", FieldType.ErrnoCounts, "", 0, Sum, MetricAndFiles, r => FieldValue.Of(r.ErrorsByErrno), (r, v) => r.SetErrorsByErrno(v.Counts)),
        PassFail,
        Count("drain_timeout", "", Max, All, r => r.DrainTimeout, (r, v) => r.DrainTimeout = checked((int)v)),
        Count("gating_violation", "echoes", Sum, All, r => r.GatingViolation, (r, v) => r.GatingViolation = v),
        P999Us,
        Number("max_us", "µs", 2, Histogram, All, r => r.MaxUs, null),
        Number("stdev_us", "µs", 2, Histogram, All, r => r.StdevUs, null),
        Text("stack", "", Same, All, r => r.Stack, (r, v) => r.Stack = v ?? ""),
        Count("shards", "threads", Sum, All, r => r.ShardCount, (r, v) => r.ShardCount = checked((int)v)),
        Count("hosts", "processes", Sum, All, r => r.Hosts, (r, v) => r.Hosts = checked((int)v)),
        Number("cpu_s", "s", 2, Sum, All | Report, r => r.CpuSeconds, (r, v) => r.CpuSeconds = v),
        Number("peak_rss_mb", "MiB", 1, Max, All | Report, r => r.PeakRssBytes / MiB, (r, v) => r.PeakRssBytes = (long)Math.Round(v * MiB)),
        Number("alloc_bytes_per_packet", "bytes", 6, Derived, All, r => r.AllocatedBytesPerPacket, null),
        new("interrupted", FieldType.Flag, "", 0, Max, All, r => FieldValue.Of(r.Interrupted), (r, v) => r.Interrupted = v.Flag),
        Count("protocol_errors", "connections", Sum, All, r => r.ProtocolErrors, (r, v) => r.ProtocolErrors = v),
        Count("disconnects", "connections", Sum, All, r => r.Disconnects, (r, v) => r.Disconnects = v),
        Count("lost", "packets", Sum, All, r => r.Lost, (r, v) => r.Lost = v),
        Text("fail_reason", "", Judged, All, r => r.FailReason, null),
        Number("rate", "packets/s", 2, Sum, All | Report, r => r.Settings.Rate, (r, v) => r.Settings = r.Settings with { Rate = v }),
        Count("late", "packets", Sum, All | Report, r => r.Late, (r, v) => r.Late = v),
        Number("startup_to_connected_ms", "ms", 2, Max, MetricAndFiles, r => r.StartupToConnectedMs, (r, v) => r.StartupToConnectedMs = v),
        Number("startup_to_first_echo_ms", "ms", 2, Max, MetricAndFiles, r => r.StartupToFirstEchoMs, (r, v) => r.StartupToFirstEchoMs = v),
        Count("first_n", "echoes", Sum, MetricAndFiles, r => r.FirstN, (r, v) => r.FirstN = v),
        Number("first_n_p50_us", "µs", 2, Max, MetricAndFiles, r => r.FirstNP50Us, (r, v) => r.FirstNP50Us = v),
        Number("first_n_max_us", "µs", 2, Max, MetricAndFiles, r => r.FirstNMaxUs, (r, v) => r.FirstNMaxUs = v),
        Count("server_samples", "reads", Max, MetricAndFiles, r => r.ServerTimeSamples, (r, v) => r.ServerTimeSamples = v),
        Number("server_p50_us", "µs", 2, Max, MetricAndFiles, r => r.ServerP50Us, (r, v) => r.ServerP50Us = v),
        Number("server_p99_us", "µs", 2, Max, MetricAndFiles, r => r.ServerP99Us, (r, v) => r.ServerP99Us = v),
        Number("server_max_us", "µs", 2, Max, MetricAndFiles, r => r.ServerMaxUs, (r, v) => r.ServerMaxUs = v),
        // Scale (several processes): the connect phase and memory per connection.
        Number("connect_s", "s", 3, Max, All | MergeInput, r => r.ConnectSeconds, (r, v) => r.ConnectSeconds = v),
        Number("connect_rate", "connections/s", 1, Derived, All, r => r.ConnectRate, null),
        Number("client_kb_per_conn", "KiB", 2, Derived, All, r => r.ClientKbPerConnection, null),
        Number("server_kb_per_conn", "KiB", 2, Derived, All, r => r.ServerKbPerConnection, null),
        Reason,
        Number("warmup_s", "s", -1, Max, MergeInput, r => r.Settings.WarmupSeconds, (r, v) => r.Settings = r.Settings with { WarmupSeconds = v }),
        Number("measure_s", "s", -1, Same, MergeInput, r => r.Settings.MeasureSeconds, (r, v) => r.Settings = r.Settings with { MeasureSeconds = v }),
        Count("latency_sample_rate", "echoes", Same, MergeInput, r => r.Settings.LatencySampleRate, (r, v) => r.Settings = r.Settings with { LatencySampleRate = checked((int)v) }),
        Count("bad_echoes", "echoes", Sum, MergeInput, r => r.BadEchoes, (r, v) => r.BadEchoes = v),
        Count("alloc_bytes", "bytes", Sum, MergeInput, r => r.AllocatedBytes, (r, v) => r.AllocatedBytes = v),
        Time("start_at", Common, r => r.Settings.StartAt, (r, v) => r.Settings = r.Settings with { StartAt = v }),
        Time("measure_started_at", Min, r => r.MeasureStartedAt, (r, v) => r.MeasureStartedAt = v),
        Count("client_rss_growth_bytes", "bytes", Sum, MergeInput, r => r.ClientRssGrowthBytes, (r, v) => r.ClientRssGrowthBytes = v),
        Count("server_rss_growth_bytes", "bytes", Sum, MergeInput, r => r.ServerRssGrowthBytes, (r, v) => r.ServerRssGrowthBytes = v),
    ];

    /// <summary>The fields of <paramref name="format"/>, in order.</summary>
    public static IReadOnlyList<ResultField> In(FieldFormats format) => Fields.Where(f => f.In(format)).ToArray();

    /// <summary>The field called <paramref name="name"/>.</summary>
    public static ResultField Named(string name) => Fields.Single(f => f.Name == name);

    /// <summary>The id in METRIC/CSV/JSON: --scenario-id, a sweep's id, or "&lt;stack&gt;-&lt;scenario&gt;".</summary>
    public static string ScenarioId(ScenarioResult result) =>
        result.Settings.ScenarioId ?? $"{result.Stack}-{result.Settings.Scenario}";

    private static ResultField Count(string name, string unit, MergeRule merge, FieldFormats formats, Func<ScenarioResult, long> get, Action<ScenarioResult, long>? set) =>
        new(name, FieldType.Integer, unit, 0, merge, formats, r => FieldValue.Of(get(r)), set is null ? null : (r, v) => set(r, v.Integer));

    private static ResultField Number(string name, string unit, int decimals, MergeRule merge, FieldFormats formats, Func<ScenarioResult, double> get, Action<ScenarioResult, double>? set) =>
        new(name, FieldType.Decimal, unit, decimals, merge, formats, r => FieldValue.Of(get(r), decimals), set is null ? null : (r, v) => set(r, v.Number));

    private static ResultField Text(string name, string unit, MergeRule merge, FieldFormats formats, Func<ScenarioResult, string?> get, Action<ScenarioResult, string?>? set) =>
        new(name, FieldType.Text, unit, 0, merge, formats, r => FieldValue.Of(get(r)), set is null ? null : (r, v) => set(r, v.Text));

    /// <summary>A wall-clock time (Unix seconds, every decimal kept), null when there is none; in merge_input only.</summary>
    private static ResultField Time(string name, MergeRule merge, Func<ScenarioResult, double?> get, Action<ScenarioResult, double?> set) =>
        new(name, FieldType.Time, "Unix s", -1, merge, MergeInput, r => FieldValue.Of(get(r), -1), (r, v) => set(r, v.OptionalNumber));
}
