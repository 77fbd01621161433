// --summary-json: the run as one JSON object, or the runs of a sweep (s3, s4) as an array, with
// ResultSchema's JSON fields (the CSV's columns; with --json-histogram, MergeInputJson's after them).
// Beside it, each run with latency samples gets HdrHistogram's percentile distribution (.hgrm).
using System.Text.Json;
using System.Text.Json.Nodes;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>Writes results as JSON with <see cref="Utf8JsonWriter"/> (no reflection).</summary>
internal static class SummaryJsonFile
{
    private static readonly JsonWriterOptions Options = new() { Indented = true };
    private static readonly IReadOnlyList<ResultField> Properties = ResultSchema.In(FieldFormats.Json);

    /// <summary>
    /// Replaces <paramref name="path"/> with <paramref name="results"/>: an array when
    /// <paramref name="asArray"/>, else the single result as an object. The file is written
    /// beside and moved into place, so a reader never sees half of it. <paramref name="withHistogram"/>
    /// adds each run's latency histogram and merge_input (<see cref="MergeInputJson"/>). Every run
    /// with latency samples also gets its .hgrm (<see cref="HgrmPath"/>).
    /// </summary>
    public static void Write(string path, IReadOnlyList<ScenarioResult> results, bool asArray, bool withHistogram = false)
    {
        if (!asArray && results.Count != 1)
        {
            throw new ArgumentException("a single-run summary needs exactly one result", nameof(results));
        }

        OutputFiles.CreateParentDirectory(path);
        string temporary = path + ".tmp";
        using (var stream = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            WriteTo(stream, results, asArray, withHistogram);
        }

        File.Move(temporary, path, overwrite: true);
        foreach (ScenarioResult result in results)
        {
            if (result.Latency is { TotalCount: > 0 } latency)
            {
                LatencyHistograms.WriteHgrm(HgrmPath(path, result, asArray), latency);
            }
        }
    }

    /// <summary>
    /// Sets <paramref name="fields"/> of the single-run summary at <paramref name="path"/> to their values in
    /// <paramref name="result"/>, leaving every other property as it was: how `compare` adds what only the
    /// server child knows (its SERVER_TIME figures) to the file the client child wrote.
    /// </summary>
    /// <exception cref="InvalidDataException">The file does not hold one JSON object.</exception>
    public static void Update(string path, ScenarioResult result, IEnumerable<ResultField> fields)
    {
        ArgumentNullException.ThrowIfNull(result);
        ArgumentNullException.ThrowIfNull(fields);
        JsonObject summary = JsonNode.Parse(File.ReadAllBytes(path)) as JsonObject
            ?? throw new InvalidDataException($"{path} does not hold the JSON object of one run");
        foreach (ResultField field in fields)
        {
            using var value = new MemoryStream();
            using (var writer = new Utf8JsonWriter(value))
            {
                writer.WriteStartObject();
                field.Read(result).WriteJson(writer, field.Name);
                writer.WriteEndObject();
            }

            summary[field.Name] = JsonNode.Parse(value.ToArray())![field.Name]!.DeepClone();
        }

        string temporary = path + ".tmp";
        using (var stream = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            using (var writer = new Utf8JsonWriter(stream, Options))
            {
                summary.WriteTo(writer);
            }

            stream.WriteByte((byte)'\n');
        }

        File.Move(temporary, path, overwrite: true);
    }

    /// <summary>
    /// Where a run's .hgrm goes: the JSON's path with .hgrm for its extension ("summary.hgrm"), or
    /// for a sweep's array with the run's scenario_id before it ("summary.s3-hwm-300000.hgrm").
    /// </summary>
    public static string HgrmPath(string jsonPath, ScenarioResult result, bool asArray)
    {
        if (!asArray)
        {
            return HgrmPath(jsonPath);
        }

        char[] invalid = Path.GetInvalidFileNameChars();
        string id = string.Concat(ResultSchema.ScenarioId(result).Select(c => invalid.Contains(c) || char.IsWhiteSpace(c) ? '_' : c));
        return Path.ChangeExtension(jsonPath, null) + "." + id + ".hgrm";
    }

    /// <summary>The .hgrm of a single-run summary at <paramref name="jsonPath"/>.</summary>
    public static string HgrmPath(string jsonPath) => Path.ChangeExtension(jsonPath, ".hgrm");

    /// <summary>Writes the JSON to <paramref name="stream"/>, ending with a newline.</summary>
    public static void WriteTo(Stream stream, IReadOnlyList<ScenarioResult> results, bool asArray, bool withHistogram = false)
    {
        using (var writer = new Utf8JsonWriter(stream, Options))
        {
            if (asArray)
            {
                writer.WriteStartArray();
                foreach (ScenarioResult result in results)
                {
                    WriteObject(writer, result, withHistogram);
                }

                writer.WriteEndArray();
            }
            else
            {
                WriteObject(writer, results[0], withHistogram);
            }
        }

        stream.WriteByte((byte)'\n');
    }

    private static void WriteObject(Utf8JsonWriter writer, ScenarioResult result, bool withHistogram)
    {
        writer.WriteStartObject();
        foreach (ResultField field in Properties)
        {
            field.Read(result).WriteJson(writer, field.Name);
        }

        if (withHistogram)
        {
            MergeInputJson.Write(writer, result);
        }

        writer.WriteEndObject();
    }
}
