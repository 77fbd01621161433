// Round-trip latency in the tools, kept in HdrHistogram's LongHistogram: values in nanoseconds from
// 0 to 2^40 - 1 (about 18 minutes; larger ones are clamped) at 3 significant decimal digits (each
// value is reported within 0.1% of itself). One histogram per shard (per socket-engine thread on
// the dotnet stack) records without locks or allocation; Add merges them exactly, because every
// histogram here has the same layout. For `merge` a histogram travels as HdrHistogram's own log
// text (HistogramLogWriter: base64 of the compressed histogram), which HistogramLogReader rebuilds
// count for count; a run's summary also gets HdrHistogram's .hgrm percentile distribution.
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;
using HdrHistogram;
using HdrHistogram.Iteration;

namespace NetZlink.Stress.Latency;

/// <summary>Creates, records into, summarises, writes and reads the tools' latency histograms.</summary>
internal static class LatencyHistograms
{
    /// <summary>The largest value kept (ns); larger values are recorded as this.</summary>
    public const long HighestTrackableNs = (1L << 40) - 1;

    /// <summary>Decimal digits every value keeps: relative error at most 10^-3.</summary>
    public const int SignificantDigits = 3;

    /// <summary>The smallest value HdrHistogram tells apart (ns).</summary>
    public const long LowestDiscernibleNs = 1;

    /// <summary>
    /// An empty histogram of the tools' layout. It records (and forgets) one value first: the
    /// package's first record in a process builds a 1 KB lookup table, which would otherwise land
    /// on a shard thread during the measured phase and show in alloc_bytes_per_packet.
    /// </summary>
    public static LongHistogram Create()
    {
        var histogram = new LongHistogram(LowestDiscernibleNs, HighestTrackableNs, SignificantDigits);
        histogram.RecordValue(HighestTrackableNs);
        histogram.Reset();
        return histogram;
    }

    /// <summary>Records one round trip of <paramref name="nanoseconds"/>, clamped into 0..<see cref="HighestTrackableNs"/>; no allocation.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Record(HistogramBase histogram, long nanoseconds) =>
        histogram.RecordValue(nanoseconds < 0 ? 0 : nanoseconds > HighestTrackableNs ? HighestTrackableNs : nanoseconds);

    /// <summary>A new histogram holding every count of <paramref name="parts"/> (exact: one layout).</summary>
    public static LongHistogram Merge(IEnumerable<HistogramBase> parts)
    {
        LongHistogram merged = Create();
        foreach (HistogramBase part in parts)
        {
            merged.Add(part);
        }

        return merged;
    }

    /// <summary>The value (µs) at <paramref name="percentile"/>: HdrHistogram's rule (the highest value equivalent to the bucket holding that rank); 0 when empty.</summary>
    public static double PercentileUs(HistogramBase histogram, double percentile) =>
        histogram.TotalCount == 0 ? 0 : histogram.GetValueAtPercentile(percentile) / 1000.0;

    /// <summary>
    /// <see cref="PercentileUs"/> on a histogram a shard may be recording into at the same moment:
    /// an estimate for the progress line (a torn read may find no rank and gives 0), never a result.
    /// </summary>
    public static double PercentileUsWhileRecording(HistogramBase histogram, double percentile)
    {
        try
        {
            return PercentileUs(histogram, percentile);
        }
        catch (ArgumentOutOfRangeException)
        {
            return 0;
        }
    }

    /// <summary>The largest value recorded (µs, to the histogram's precision); 0 when empty.</summary>
    public static double MaxUs(HistogramBase histogram) => histogram.TotalCount == 0 ? 0 : histogram.GetMaxValue() / 1000.0;

    /// <summary>The mean (µs) of the recorded values, each taken at its bucket's middle; 0 when empty.</summary>
    public static double MeanUs(HistogramBase histogram) => histogram.TotalCount == 0 ? 0 : histogram.GetMean() / 1000.0;

    /// <summary>The population standard deviation (µs), from the buckets as <see cref="MeanUs"/>; 0 when empty.</summary>
    public static double StdevUs(HistogramBase histogram) => histogram.TotalCount == 0 ? 0 : histogram.GetStdDeviation() / 1000.0;

    /// <summary>
    /// The histogram as HdrHistogram's log text (format 1.3): comment lines, a header row and one
    /// interval line whose last column is the base64 of the compressed histogram.
    /// </summary>
    public static string ToLog(HistogramBase histogram, DateTime startTimeUtc)
    {
        using var stream = new MemoryStream();
        using (var writer = new HistogramLogWriter(stream))
        {
            writer.Write(startTimeUtc, histogram);
        }

        // HistogramLogWriter writes UTF-16 with a byte order mark; the reader takes any encoding.
        using var reader = new StreamReader(new MemoryStream(stream.ToArray()), detectEncodingFromByteOrderMarks: true);
        return reader.ReadToEnd();
    }

    /// <summary>Rebuilds the one histogram of a <see cref="ToLog"/> text.</summary>
    /// <exception cref="InvalidDataException">The text is not such a log, holds another number of histograms, or another layout (which could not be merged exactly).</exception>
    // HistogramLogReader builds the histogram it decodes through a constructor it finds by
    // reflection: a trimmed or native AOT build must keep those constructors.
    [DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors | DynamicallyAccessedMemberTypes.NonPublicConstructors, typeof(LongHistogram))]
    [DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors | DynamicallyAccessedMemberTypes.NonPublicConstructors, typeof(IntHistogram))]
    [DynamicDependency(DynamicallyAccessedMemberTypes.PublicConstructors | DynamicallyAccessedMemberTypes.NonPublicConstructors, typeof(ShortHistogram))]
    public static LongHistogram FromLog(string log)
    {
        List<HistogramBase> read;
        try
        {
            using var reader = new HistogramLogReader(new MemoryStream(Encoding.UTF8.GetBytes(log)));
            read = reader.ReadHistograms().ToList();
        }
        catch (Exception e) when (e is FormatException or InvalidOperationException or ArgumentException or IOException
            or IndexOutOfRangeException or NotSupportedException or OverflowException or InvalidDataException)
        {
            throw Invalid($"not an HdrHistogram log: {e.Message}", e);
        }

        if (read.Count != 1)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture, $"the log holds {read.Count} histograms, and a run's has exactly one"));
        }

        HistogramBase histogram = read[0];
        if (histogram.LowestTrackableValue != LowestDiscernibleNs || histogram.NumberOfSignificantValueDigits != SignificantDigits
            || histogram.HighestTrackableValue < HighestTrackableNs)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture,
                $"its layout (lowest {histogram.LowestTrackableValue}, highest {histogram.HighestTrackableValue}, {histogram.NumberOfSignificantValueDigits} digits) is not this build's (lowest {LowestDiscernibleNs}, highest {HighestTrackableNs}, {SignificantDigits} digits), so it cannot be merged exactly"));
        }

        try
        {
            return Merge([histogram]);
        }
        catch (IndexOutOfRangeException e)
        {
            throw Invalid($"it holds values above {HighestTrackableNs} ns", e);
        }
    }

    /// <summary>
    /// The histogram as "value:count,…" (ns, lowest first; each value the lowest of its bucket, so
    /// <see cref="FromCounts"/> puts every count back in its bucket): the encoding of limit_echo's
    /// latency lists and of the servers' SERVER_TIME line. Empty when nothing was recorded.
    /// </summary>
    public static string ToCounts(HistogramBase histogram)
    {
        var text = new StringBuilder();
        foreach (HistogramIterationValue bucket in histogram.RecordedValues())
        {
            text.Append(text.Length == 0 ? string.Empty : ",")
                .Append(histogram.LowestEquivalentValue(bucket.ValueIteratedTo).ToString(CultureInfo.InvariantCulture))
                .Append(':')
                .Append(bucket.CountAtValueIteratedTo.ToString(CultureInfo.InvariantCulture));
        }

        return text.ToString();
    }

    /// <summary>A histogram of the tools' layout from "value:count,…" (ns; values above the highest trackable are clamped).</summary>
    /// <exception cref="FormatException">A pair is not value:count with whole numbers and a count of at least 1; the message is `got "PAIR"`.</exception>
    public static LongHistogram FromCounts(string pairs)
    {
        ArgumentNullException.ThrowIfNull(pairs);
        LongHistogram histogram = Create();
        foreach (string pair in pairs.Split(',', StringSplitOptions.RemoveEmptyEntries))
        {
            string[] parts = pair.Split(':');
            if (parts.Length != 2
                || !long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out long value)
                || !long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out long count) || count < 1)
            {
                throw new FormatException($"got \"{pair}\"");
            }

            histogram.RecordValueWithCount(Math.Min(value, HighestTrackableNs), count);
        }

        return histogram;
    }

    /// <summary>Writes HdrHistogram's percentile distribution (.hgrm) of <paramref name="histogram"/>, in µs, to <paramref name="path"/>.</summary>
    public static void WriteHgrm(string path, HistogramBase histogram)
    {
        using var writer = new StreamWriter(path, append: false, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false));
        histogram.OutputPercentileDistribution(writer, percentileTicksPerHalfDistance: 5, outputValueUnitScalingRatio: OutputScalingFactor.TimeStampToMicroseconds);
    }

    private static InvalidDataException Invalid(string problem, Exception? inner = null) => new("latency histogram: " + problem, inner);
}
