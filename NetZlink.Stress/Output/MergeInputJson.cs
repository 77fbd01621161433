// What --json-histogram adds to a run's --summary-json, after the CSV's columns: the run's latency
// histogram as HdrHistogram's log text (LatencyHistograms.ToLog), and a "merge_input" object with
// the settings and counts the columns lack, which `merge` needs to check and combine several hosts' runs.
using System.Text.Json;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>The names and the writer of the merge_input and latency_histogram properties.</summary>
internal static class MergeInputJson
{
    /// <summary>The object's property name.</summary>
    public const string Name = "merge_input";

    /// <summary>The histogram's property name (its object has its own version).</summary>
    public const string HistogramName = "latency_histogram";

    /// <summary>The version of the merge_input object this build writes and reads.</summary>
    public const int Version = 2;

    public const string VersionName = "version";
    public const string ScenarioName = "scenario";
    public const string WarmupName = "warmup_s";
    public const string MeasureName = "measure_s";
    public const string SampleRateName = "latency_sample_rate";
    public const string BadEchoesName = "bad_echoes";
    public const string ThroughputName = "throughput";
    public const string StartAtName = "start_at";
    public const string MeasureStartedAtName = "measure_started_at";

    /// <summary>Writes both properties into the object being written.</summary>
    public static void Write(Utf8JsonWriter writer, ScenarioResult result)
    {
        ScenarioSettings s = result.Settings;
        writer.WriteStartObject(Name);
        writer.WriteNumber(VersionName, Version);
        writer.WriteString(ScenarioName, s.Scenario);
        writer.WriteNumber(WarmupName, s.WarmupSeconds);
        writer.WriteNumber(MeasureName, s.MeasureSeconds);
        writer.WriteNumber(SampleRateName, s.LatencySampleRate);
        writer.WriteNumber(BadEchoesName, result.BadEchoes);
        // Unrounded (the column has 2 decimals), so that a sum of hosts rounds only once.
        writer.WriteNumber(ThroughputName, result.Throughput);
        WriteOptional(writer, StartAtName, s.StartAt);
        WriteOptional(writer, MeasureStartedAtName, result.MeasureStartedAt);
        writer.WriteEndObject();

        writer.WriteString(HistogramName, LatencyHistograms.ToLog(result.Latency ?? LatencyHistograms.Create(), StartTime(result)));
    }

    /// <summary>The log's start time: when the measured phase began, else the Unix epoch.</summary>
    private static DateTime StartTime(ScenarioResult result) =>
        DateTime.UnixEpoch.AddSeconds(result.MeasureStartedAt ?? 0);

    private static void WriteOptional(Utf8JsonWriter writer, string name, double? value)
    {
        if (value is { } number)
        {
            writer.WriteNumber(name, number);
        }
        else
        {
            writer.WriteNull(name);
        }
    }
}
