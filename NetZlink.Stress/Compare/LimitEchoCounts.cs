// The c-epoll limit row's COUNTS line (native/bench/limit_echo.c, whose header documents it) turned
// into a judged ScenarioResult: limit_echo only counts; the counts go through the runner's own
// Collect and Judge, so the limit row is judged by the rules of the .NET stacks and written by
// the same writers (RESULT/METRIC, CSV, JSON, .hgrm).
using System.Globalization;
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>Reads limit_echo's COUNTS line.</summary>
internal static class LimitEchoCounts
{
    /// <summary>The line's first word.</summary>
    public const string Tag = "COUNTS";

    /// <summary>The version of the line this build reads (4: gating_violation spelled as the result field).</summary>
    public const int Version = 4;

    /// <summary>
    /// Every name of the line, in the order limit_echo prints them, each with the result field
    /// (ResultSchema) whose value it is, unchanged, or null for a raw count or a figure the runner
    /// turns into fields (connected becomes connect_success, sent_measured sent, and so on).
    /// NetZlink.Stress.Tests checks limit_echo.c's printf against this list and every named field
    /// against ResultSchema, so a name cannot drift from the schema unnoticed.
    /// </summary>
    public static readonly IReadOnlyList<(string Name, string? Field)> Names =
    [
        ("version", null), ("scenario", "scenario"), ("ccu", "ccu"), ("size", "size"), ("inflight", "inflight"),
        ("warmup_s", "warmup_s"), ("measure_s", "measure_s"), ("drain_timeout_s", null),
        ("latency_sample_rate", "latency_sample_rate"), ("rate", "rate"), ("io", null),
        ("connected", null), ("connect_failed", null), ("connect_timed_out", null), ("disconnected", null),
        ("sent_total", null), ("received_total", null), ("sent_measured", null), ("received_measured", null),
        ("in_flight", null), (GatingViolation, GatingViolation), ("bad_echoes", "bad_echoes"), ("peer_closed", null),
        ("protocol_errors", "protocol_errors"), ("lost", "lost"), ("late", "late"),
        ("drain_timeout", "drain_timeout"), ("drain_wait", null), ("outstanding", null), ("unsent", null),
        ("interrupted", "interrupted"), ("throughput_ns", null), ("cpu_us", null), ("peak_rss_kb", null),
        ("startup_to_connected_ns", null), ("startup_to_first_echo_ns", null),
        ("errors_by_errno", "errors_by_errno"), ("first_n_ns", null), ("latency_ns", null),
    ];

    private const string GatingViolation = "gating_violation";

    /// <summary>The COUNTS line among <paramref name="lines"/> (a client's stdout), or null.</summary>
    public static string? Find(IEnumerable<string> lines) =>
        NameValueLine.Find(lines, Tag);

    /// <summary>
    /// The judged result of a COUNTS line, stack c-epoll or c-uring (its io=; none: c-epoll), with
    /// <paramref name="scenarioId"/> as its scenario_id (null: the default "&lt;stack&gt;-&lt;scenario&gt;").
    /// </summary>
    /// <exception cref="InvalidDataException">The line is not a COUNTS line of this version, or a value is missing or malformed (named in the message).</exception>
    public static ScenarioResult Parse(string line, string? scenarioId = null)
    {
        Dictionary<string, string> values = Pairs(line);
        long version = Integer(values, "version");
        if (version != Version)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture, $"version {version} is not one this build reads ({Version})"));
        }

        var settings = new ScenarioSettings
        {
            Scenario = Text(values, "scenario"),
            ScenarioId = scenarioId,
            Ccu = Int32(values, "ccu"),
            Size = Int32(values, "size"),
            Inflight = Int32(values, "inflight"),
            WarmupSeconds = Number(values, "warmup_s"),
            MeasureSeconds = Number(values, "measure_s"),
            DrainTimeoutSeconds = Number(values, "drain_timeout_s"),
            LatencySampleRate = Int32(values, "latency_sample_rate"),
            Rate = Number(values, "rate"),
        };
        string io = values.GetValueOrDefault("io", "epoll");
        if (io is not ("epoll" or "uring"))
        {
            throw Invalid($"io must be epoll or uring (got \"{io}\")");
        }

        var result = new ScenarioResult { Settings = settings, Stack = CompareStacks.OfLimitIo(io), ShardCount = 1 };
        var totals = new LoadTotals(
            Connected: Integer(values, "connected"),
            ConnectFailed: Integer(values, "connect_failed"),
            ConnectTimedOut: Integer(values, "connect_timed_out"),
            Disconnected: Integer(values, "disconnected"),
            SentTotal: Integer(values, "sent_total"),
            ReceivedTotal: Integer(values, "received_total"),
            SentMeasured: Integer(values, "sent_measured"),
            ReceivedMeasured: Integer(values, "received_measured"),
            InFlight: Integer(values, "in_flight"),
            GatingViolations: Integer(values, GatingViolation),
            BadEchoes: Integer(values, "bad_echoes"),
            PeerClosed: Integer(values, "peer_closed"),
            ProtocolErrors: Integer(values, "protocol_errors"),
            Lost: Integer(values, "lost"),
            Late: Integer(values, "late"));
        IReadOnlyDictionary<int, long> errors = FieldValue.ParseCounts(Text(values, "errors_by_errno"))
            ?? throw Invalid($"errors_by_errno must be errno:count pairs joined by ';' (got \"{values["errors_by_errno"]}\")");
        // limit_echo has no managed heap: nothing is allocated that alloc_bytes_per_packet counts.
        ScenarioRunner.Collect(totals, errors, Latency("latency_ns", Text(values, "latency_ns")), allocatedBytes: 0, result);

        result.Interrupted = Flag(values, "interrupted");
        long throughputNs = Integer(values, "throughput_ns");
        result.Throughput = throughputNs > 0 ? totals.ReceivedMeasured / (throughputNs / 1e9) : 0;
        result.CpuSeconds = Integer(values, "cpu_us") / 1e6;
        result.PeakRssBytes = Integer(values, "peak_rss_kb") * 1024;
        result.StartupToConnectedMs = Integer(values, "startup_to_connected_ns") / 1e6;
        result.StartupToFirstEchoMs = Integer(values, "startup_to_first_echo_ns") / 1e6;
        ColdStartProbe.SetFirstEchoes(result, Latency("first_n_ns", Text(values, "first_n_ns")));
        if (Flag(values, "drain_timeout"))
        {
            result.DrainTimeout = 1;
            long outstanding = Integer(values, "outstanding");
            result.Reason = Text(values, "drain_wait") switch
            {
                "settle" => ScenarioRunner.SettleTimeoutReason(settings.DrainTimeoutSeconds),
                "drain" => ScenarioRunner.DrainTimeoutReason(outstanding, Integer(values, "unsent"), settings.DrainTimeoutSeconds),
                // s0's wait for its echo: the pass rules give their own text.
                "echo" => null,
                string other => throw Invalid($"drain_wait must be settle, drain or echo when drain_timeout=1 (got \"{other}\")"),
            };
        }

        ScenarioRunner.Judge(result, settings.Ccu);
        return result;
    }

    /// <summary>"value:count,…" (values in ns, lowest first) as a histogram of the tools' layout.</summary>
    private static LongHistogram Latency(string name, string pairs)
    {
        try
        {
            return LatencyHistograms.FromCounts(pairs);
        }
        catch (FormatException e)
        {
            throw Invalid($"{name} must be value:count pairs joined by ',' ({e.Message})");
        }
    }

    private static Dictionary<string, string> Pairs(string line) => NameValueLine.Pairs(line, Tag, Invalid);

    private static string Text(Dictionary<string, string> values, string name) =>
        values.TryGetValue(name, out string? value) ? value : throw Invalid($"{name}= is missing");

    private static long Integer(Dictionary<string, string> values, string name) =>
        long.TryParse(Text(values, name), NumberStyles.None, CultureInfo.InvariantCulture, out long value)
            ? value
            : throw Invalid($"{name} must be a whole number, 0 or more (got \"{values[name]}\")");

    private static int Int32(Dictionary<string, string> values, string name) =>
        Integer(values, name) is var value and <= int.MaxValue ? (int)value : throw Invalid($"{name} is out of range (got {values[name]})");

    private static double Number(Dictionary<string, string> values, string name) =>
        double.TryParse(Text(values, name), NumberStyles.Float, CultureInfo.InvariantCulture, out double value) && double.IsFinite(value) && value >= 0
            ? value
            : throw Invalid($"{name} must be a number, 0 or more (got \"{values[name]}\")");

    private static bool Flag(Dictionary<string, string> values, string name) => Integer(values, name) switch
    {
        0 => false,
        1 => true,
        _ => throw Invalid($"{name} must be 0 or 1 (got {values[name]})"),
    };

    private static InvalidDataException Invalid(string problem) => new($"limit_echo's {Tag} line: {problem}");
}
