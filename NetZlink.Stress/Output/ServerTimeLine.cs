// The SERVER_TIME line an echo server prints on stdout when it stops (the netzlink and dotnet
// servers of this program, and limit_echo's server), and how the parent that started it reads it:
//   SERVER_TIME version=1 samples=N time_ns=value:count,...
// samples: reads timed; time_ns: their receive-to-send times (Latency/ServerTimes), in ns, as
// value:count pairs lowest first, each value the lowest of its HdrHistogram bucket (empty: none).
using System.Globalization;
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>A server's receive-to-send times as its SERVER_TIME line carries them.</summary>
internal sealed class ServerTimeLine
{
    /// <summary>The line's first word.</summary>
    public const string Tag = "SERVER_TIME";

    /// <summary>The version of the line this build writes and reads.</summary>
    public const int Version = 1;

    private ServerTimeLine(LongHistogram times) => Times = times;

    /// <summary>The server's times (ns).</summary>
    public LongHistogram Times { get; }

    /// <summary>The line for <paramref name="times"/>.</summary>
    public static string Format(HistogramBase times)
    {
        ArgumentNullException.ThrowIfNull(times);
        return string.Create(CultureInfo.InvariantCulture, $"{Tag} version={Version} samples={times.TotalCount} time_ns={LatencyHistograms.ToCounts(times)}");
    }

    /// <summary>Several servers' times as one (each histogram added); null for none, the line itself for one.</summary>
    public static ServerTimeLine? Combine(IReadOnlyList<ServerTimeLine> lines)
    {
        ArgumentNullException.ThrowIfNull(lines);
        if (lines.Count <= 1)
        {
            return lines.Count == 0 ? null : lines[0];
        }

        LongHistogram all = LatencyHistograms.Create();
        foreach (ServerTimeLine line in lines)
        {
            all.Add(line.Times);
        }

        return new ServerTimeLine(all);
    }

    /// <summary>The SERVER_TIME line among <paramref name="lines"/> (a server's stdout), or null.</summary>
    public static string? Find(IEnumerable<string> lines) => NameValueLine.Find(lines, Tag);

    /// <summary>Reads a SERVER_TIME line.</summary>
    /// <exception cref="InvalidDataException">Not such a line, another version, or samples= does not match time_ns= (named in the message).</exception>
    public static ServerTimeLine Parse(string line)
    {
        Dictionary<string, string> values = NameValueLine.Pairs(line, Tag, Invalid);
        if (!values.TryGetValue("version", out string? version) || version != Version.ToString(CultureInfo.InvariantCulture))
        {
            throw Invalid($"version {version ?? "(missing)"} is not one this build reads ({Version})");
        }

        if (!values.TryGetValue("samples", out string? samplesText)
            || !long.TryParse(samplesText, NumberStyles.None, CultureInfo.InvariantCulture, out long samples))
        {
            throw Invalid($"samples must be a whole number, 0 or more (got \"{samplesText ?? "(missing)"}\")");
        }

        LongHistogram times;
        try
        {
            times = LatencyHistograms.FromCounts(values.TryGetValue("time_ns", out string? pairs) ? pairs : throw Invalid("time_ns= is missing"));
        }
        catch (FormatException e)
        {
            throw Invalid($"time_ns must be value:count pairs joined by ',' ({e.Message})");
        }

        if (times.TotalCount != samples)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture, $"samples={samples} but time_ns holds {times.TotalCount}"));
        }

        return new ServerTimeLine(times);
    }

    /// <summary>Sets the result's server_* fields from these times (all 0 when none was timed).</summary>
    public void ApplyTo(ScenarioResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        result.ServerTimeSamples = Times.TotalCount;
        result.ServerP50Us = LatencyHistograms.PercentileUs(Times, 50);
        result.ServerP99Us = LatencyHistograms.PercentileUs(Times, 99);
        result.ServerMaxUs = LatencyHistograms.MaxUs(Times);
    }

    private static InvalidDataException Invalid(string problem) => new($"the echo server's {Tag} line: {problem}");
}
