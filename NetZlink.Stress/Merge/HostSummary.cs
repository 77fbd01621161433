// One client host's --summary-json, read back for `merge`: the CSV's columns, the merge_input
// object and the latency histogram (both written by --json-histogram) as a ScenarioResult. Every
// way a file can be unusable (missing, not JSON, a sweep's array, written without the histogram,
// another format version) is an InvalidDataException naming the file and what is wrong with it.
using System.Globalization;
using System.Text.Json;
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Merge;

/// <summary>A host's run as read from its summary file.</summary>
internal sealed class HostSummary
{
    private HostSummary(string path, ScenarioResult result)
    {
        Path = path;
        Result = result;
    }

    /// <summary>The file, as given on the command line.</summary>
    public string Path { get; }

    /// <summary>The host's result, with its latency histogram in <see cref="ScenarioResult.Latency"/>.</summary>
    public ScenarioResult Result { get; }

    /// <summary>Reads <paramref name="path"/>.</summary>
    /// <exception cref="InvalidDataException">The file cannot be read or is not a single run written with --json-histogram.</exception>
    public static HostSummary Read(string path)
    {
        byte[] bytes;
        try
        {
            bytes = File.ReadAllBytes(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException or ArgumentException)
        {
            throw new InvalidDataException($"{path}: cannot be read: {e.Message}", e);
        }

        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(bytes);
        }
        catch (JsonException e)
        {
            throw new InvalidDataException($"{path}: is not JSON: {e.Message}", e);
        }

        using (document)
        {
            JsonElement root = document.RootElement;
            if (root.ValueKind == JsonValueKind.Array)
            {
                throw new InvalidDataException(string.Create(CultureInfo.InvariantCulture,
                    $"{path}: holds an array of {root.GetArrayLength()} runs (the --summary-json of an s3/s4 sweep); merge takes the file of one s0/s1/s2 run per host"));
            }

            if (root.ValueKind != JsonValueKind.Object)
            {
                throw new InvalidDataException($"{path}: holds a JSON {root.ValueKind}, not the object of one run's --summary-json");
            }

            return new HostSummary(path, ReadRun(new JsonObjectReader(path, root)));
        }
    }

    private static ScenarioResult ReadRun(JsonObjectReader run)
    {
        if (!run.Has(MergeInputJson.HistogramName) || !run.Has(MergeInputJson.Name))
        {
            throw run.Problem($"has no '{MergeInputJson.HistogramName}': rerun that client with --json-histogram (beside --summary-json) so that its latencies can be merged exactly");
        }

        var input = new JsonObjectReader(run.Path, run.Property(MergeInputJson.Name));
        long version = input.Integer(MergeInputJson.VersionName);
        if (version != MergeInputJson.Version)
        {
            throw run.Problem(string.Create(CultureInfo.InvariantCulture,
                $"'{MergeInputJson.Name}' has version {version}, and this build reads version {MergeInputJson.Version}"));
        }

        HistogramBase histogram;
        try
        {
            histogram = LatencyHistograms.FromLog(run.RequiredText(MergeInputJson.HistogramName));
        }
        catch (InvalidDataException e)
        {
            throw run.Problem(e.Message);
        }

        var settings = new ScenarioSettings
        {
            Scenario = input.RequiredText(MergeInputJson.ScenarioName),
            ScenarioId = run.Text("scenario_id"),
            Transport = run.RequiredText("transport"),
            Ccu = run.Int32("ccu"),
            Size = run.Int32("size"),
            Inflight = run.Int32("inflight"),
            WarmupSeconds = input.Number(MergeInputJson.WarmupName),
            MeasureSeconds = input.Number(MergeInputJson.MeasureName),
            LatencySampleRate = input.Int32(MergeInputJson.SampleRateName),
            StartAt = input.OptionalNumber(MergeInputJson.StartAtName),
            Rate = run.Number("rate"),
        };
        var result = new ScenarioResult
        {
            Settings = settings,
            Stack = run.RequiredText("stack"),
            ConnectSuccess = run.Integer("connect_success"),
            ConnectFail = run.Integer("connect_fail"),
            ConnectTimeout = run.Integer("connect_timeout"),
            Sent = run.Integer("sent"),
            Recv = run.Integer("recv"),
            Throughput = input.Number(MergeInputJson.ThroughputName),
            DrainTimeout = run.Int32("drain_timeout"),
            GatingViolation = run.Integer("gating_violation"),
            PassFail = run.RequiredText("pass_fail"),
            Reason = run.Text("reason"),
            Interrupted = run.Flag("interrupted"),
            CpuSeconds = run.Number("cpu_s"),
            PeakRssBytes = (long)Math.Round(run.Number("peak_rss_mb") * 1024 * 1024),
            AllocatedBytesPerPacket = run.Number("alloc_bytes_per_packet"),
            ShardCount = run.Int32("shards"),
            Hosts = run.Int32("hosts"),
            BadEchoes = input.Integer(MergeInputJson.BadEchoesName),
            Disconnects = run.Integer("disconnects"),
            ProtocolErrors = run.Integer("protocol_errors"),
            Lost = run.Integer("lost"),
            Late = run.Integer("late"),
            FailReason = run.RequiredText("fail_reason"),
            MeasureStartedAt = input.OptionalNumber(MergeInputJson.MeasureStartedAtName),
        };
        ReadErrorsByErrno(run, result.ErrorsByErrno);
        result.SetLatency(histogram);
        return result;
    }

    /// <summary>Parses errors_by_errno's "errno:count;errno:count".</summary>
    private static void ReadErrorsByErrno(JsonObjectReader run, SortedDictionary<int, long> into)
    {
        string text = run.Text("errors_by_errno") ?? string.Empty;
        foreach (string pair in text.Split(';', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = pair.Split(':');
            if (parts.Length != 2
                || !int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out int errno)
                || !long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out long count))
            {
                throw run.Problem($"'errors_by_errno' must be errno:count pairs joined by ';' (got \"{text}\")");
            }

            into[errno] = into.GetValueOrDefault(errno) + count;
        }
    }
}
