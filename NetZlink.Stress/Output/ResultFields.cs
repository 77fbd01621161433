// The field lists of every output format, in the seeds' order (shared/spec/stream-scenarios.md,
// "Output"), NetZlink's extra fields after them. The seeds' fields are never renamed or dropped.
using System.Globalization;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>Which fields each output carries, in order.</summary>
internal static class ResultFields
{
    /// <summary>The seeds' RESULT line.</summary>
    public static readonly IReadOnlyList<ResultColumn> SeedResult =
    [
        new("scenario", r => FieldValue.Of(r.Settings.Scenario)),
        new("transport", r => FieldValue.Of(r.Settings.Transport)),
        new("ccu", r => FieldValue.Of(r.Settings.Ccu)),
        new("size", r => FieldValue.Of(r.Settings.Size)),
        new("inflight", r => FieldValue.Of(r.Settings.Inflight)),
        new("connect_success", r => FieldValue.Of(r.ConnectSuccess)),
        new("connect_fail", r => FieldValue.Of(r.ConnectFail)),
        new("connect_timeout", r => FieldValue.Of(r.ConnectTimeout)),
        new("sent", r => FieldValue.Of(r.Sent)),
        new("recv", r => FieldValue.Of(r.Recv)),
        new("incomplete_ratio", r => FieldValue.Of(r.IncompleteRatio, 6)),
        new("throughput", r => FieldValue.Of(r.Throughput, 2)),
        new("p50_us", r => FieldValue.Of(r.P50Us, 2)),
        new("p95_us", r => FieldValue.Of(r.P95Us, 2)),
        new("p99_us", r => FieldValue.Of(r.P99Us, 2)),
        new("drain_timeout", r => FieldValue.Of(r.DrainTimeout)),
        new("gating_violation", r => FieldValue.Of(r.GatingViolation)),
        new("pass_fail", r => FieldValue.Of(r.PassFail)),
    ];

    /// <summary>The seeds' METRIC line, which is also their CSV header.</summary>
    public static readonly IReadOnlyList<ResultColumn> SeedMetric =
    [
        new("scenario_id", r => FieldValue.Of(ScenarioId(r))),
        new("transport", r => FieldValue.Of(r.Settings.Transport)),
        new("ccu", r => FieldValue.Of(r.Settings.Ccu)),
        new("inflight", r => FieldValue.Of(r.Settings.Inflight)),
        new("size", r => FieldValue.Of(r.Settings.Size)),
        new("connect_success", r => FieldValue.Of(r.ConnectSuccess)),
        new("connect_fail", r => FieldValue.Of(r.ConnectFail)),
        new("connect_timeout", r => FieldValue.Of(r.ConnectTimeout)),
        new("sent", r => FieldValue.Of(r.Sent)),
        new("recv", r => FieldValue.Of(r.Recv)),
        new("incomplete_ratio", r => FieldValue.Of(r.IncompleteRatio, 6)),
        new("throughput", r => FieldValue.Of(r.Throughput, 2)),
        new("p50", r => FieldValue.Of(r.P50Us, 2)),
        new("p95", r => FieldValue.Of(r.P95Us, 2)),
        new("p99", r => FieldValue.Of(r.P99Us, 2)),
        new("errors_by_errno", r => FieldValue.Of(ErrorsByErrno(r))),
        new("pass_fail", r => FieldValue.Of(r.PassFail)),
    ];

    /// <summary>NetZlink's fields, after the seeds' ones on every output.</summary>
    public static readonly IReadOnlyList<ResultColumn> Extra =
    [
        new("p999_us", r => FieldValue.Of(r.P999Us, 2)),
        new("max_us", r => FieldValue.Of(r.MaxUs, 2)),
        new("stdev_us", r => FieldValue.Of(r.StdevUs, 2)),
        new("stack", r => FieldValue.Of(r.Stack)),
        new("shards", r => FieldValue.Of(r.ShardCount)),
        new("hosts", r => FieldValue.Of(r.Hosts)),
        new("cpu_s", r => FieldValue.Of(r.CpuSeconds, 2)),
        new("peak_rss_mb", r => FieldValue.Of(r.PeakRssBytes / (1024.0 * 1024.0), 1)),
        new("alloc_bytes_per_packet", r => FieldValue.Of(r.AllocatedBytesPerPacket, 6)),
        new("interrupted", r => FieldValue.Of(r.Interrupted)),
        new("protocol_errors", r => FieldValue.Of(r.ProtocolErrors)),
        new("disconnects", r => FieldValue.Of(r.Disconnects)),
        new("lost", r => FieldValue.Of(r.Lost)),
        new("fail_reason", r => FieldValue.Of(r.FailReason)),
        new("rate", r => FieldValue.Of(r.Settings.Rate, 2)),
        new("late", r => FieldValue.Of(r.Late)),
    ];

    /// <summary>Pass-rule fields the RESULT line has and the METRIC row lacks.</summary>
    public static readonly IReadOnlyList<ResultColumn> MetricExtra =
    [
        new("drain_timeout", r => FieldValue.Of(r.DrainTimeout)),
        new("gating_violation", r => FieldValue.Of(r.GatingViolation)),
    ];

    /// <summary>Why a run failed or was skipped: a trailing reason="…" in the lines, a column in CSV/JSON.</summary>
    public static readonly ResultColumn Reason = new("reason", r => FieldValue.Of(r.Reason));

    /// <summary>The RESULT line's fields (reason aside).</summary>
    public static readonly IReadOnlyList<ResultColumn> ResultLine = [.. SeedResult, .. Extra];

    /// <summary>The METRIC line's fields (reason aside).</summary>
    public static readonly IReadOnlyList<ResultColumn> MetricLine = [.. SeedMetric, .. MetricExtra, .. Extra];

    /// <summary>The CSV columns and the JSON properties: the METRIC fields plus reason.</summary>
    public static readonly IReadOnlyList<ResultColumn> Table = [.. MetricLine, Reason];

    /// <summary>The id in METRIC/CSV/JSON: --scenario-id, a sweep's id, or "&lt;stack&gt;-&lt;scenario&gt;".</summary>
    public static string ScenarioId(ScenarioResult result) =>
        result.Settings.ScenarioId ?? $"{result.Stack}-{result.Settings.Scenario}";

    /// <summary>errno:count pairs joined by ';', lowest errno first; empty when there were none.</summary>
    public static string ErrorsByErrno(ScenarioResult result) =>
        string.Join(';', result.ErrorsByErrno.Select(e => string.Create(CultureInfo.InvariantCulture, $"{e.Key}:{e.Value}")));
}
