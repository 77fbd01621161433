// One client host's --summary-json, read back for `merge`: the fields ResultSchema stores (from the
// columns and the merge_input object) and the latency histogram (both written by --json-histogram)
// as a ScenarioResult. Every way a file can be unusable (missing, not JSON, a sweep's array, written
// without the histogram, another format version) is an InvalidDataException naming the file and
// what is wrong with it.
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
        if (Directory.Exists(path))
        {
            throw new InvalidDataException($"{path}: is a directory, not a --summary-json file");
        }

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
        if (!run.Has(MergeInputJson.HistogramName))
        {
            throw run.Problem($"has no '{MergeInputJson.HistogramName}': rerun that client with --json-histogram (beside --summary-json) so that its latencies can be merged exactly");
        }

        if (!run.Has(MergeInputJson.Name))
        {
            throw run.Problem($"has no '{MergeInputJson.Name}' (its exact counts and settings, which --json-histogram writes beside '{MergeInputJson.HistogramName}'): rerun that client with --json-histogram");
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

        // Every field the schema stores, from merge_input when it is there (throughput unrounded),
        // else from the columns; what the schema computes again (percentiles, verdict) is not read.
        var result = new ScenarioResult { Settings = new ScenarioSettings() };
        foreach (ResultField field in ResultSchema.Fields.Where(f => f.IsStored))
        {
            JsonObjectReader from = field.In(FieldFormats.MergeInput) ? input : run;
            FieldValue value = FieldValue.Read(from, field.Name, field.Type, field.Decimals);
            if (CannotBeNegative(field) && IsNegative(value, field.Type))
            {
                throw from.Problem(string.Create(CultureInfo.InvariantCulture, $"'{field.Name}' is negative (got {value}); a count or a rate is never below 0"));
            }

            try
            {
                field.Write!(result, value);
            }
            catch (OverflowException)
            {
                throw from.Problem(string.Create(CultureInfo.InvariantCulture, $"'{field.Name}' is out of range (got {value})"));
            }
        }

        result.SetLatency(histogram);
        return result;
    }

    /// <summary>Every count and rate; only the memory growth figures may be below 0 (memory was returned).</summary>
    private static bool CannotBeNegative(ResultField field) =>
        field.Type is FieldType.Integer or FieldType.Decimal && !field.Name.EndsWith("_growth_bytes", StringComparison.Ordinal);

    private static bool IsNegative(FieldValue value, FieldType type) =>
        type == FieldType.Integer ? value.Integer < 0 : value.Number < 0;
}
