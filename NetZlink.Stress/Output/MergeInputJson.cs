// What --json-histogram adds to a run's --summary-json, after the CSV's columns: a "merge_input"
// object with ResultSchema's MergeInput fields (the settings and counts the columns lack, and the
// throughput unrounded), which `merge` needs to check and combine several hosts' runs, and the
// run's latency histogram as HdrHistogram's log text (LatencyHistograms.ToLog).
using System.Text.Json;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>The names and the writer of the merge_input and latency_histogram properties.</summary>
internal static class MergeInputJson
{
    /// <summary>The object's property name.</summary>
    public const string Name = "merge_input";

    /// <summary>The histogram's property name.</summary>
    public const string HistogramName = "latency_histogram";

    /// <summary>The version of the merge_input object this build writes and reads.</summary>
    public const int Version = 3;

    public const string VersionName = "version";

    /// <summary>The fields in the object, after its version.</summary>
    public static readonly IReadOnlyList<ResultField> Fields = ResultSchema.In(FieldFormats.MergeInput);

    /// <summary>Writes both properties into the object being written.</summary>
    public static void Write(Utf8JsonWriter writer, ScenarioResult result)
    {
        writer.WriteStartObject(Name);
        writer.WriteNumber(VersionName, Version);
        foreach (ResultField field in Fields)
        {
            // Every decimal: a sum of hosts (throughput) then rounds only once.
            field.Read(result).WriteJson(writer, field.Name, exact: true);
        }

        writer.WriteEndObject();
        writer.WriteString(HistogramName, LatencyHistograms.ToLog(result.Latency ?? LatencyHistograms.Create(), StartTime(result)));
    }

    /// <summary>The log's start time: when the measured phase began, else the Unix epoch.</summary>
    private static DateTime StartTime(ScenarioResult result) =>
        DateTime.UnixEpoch.AddSeconds(result.MeasureStartedAt ?? 0);
}
