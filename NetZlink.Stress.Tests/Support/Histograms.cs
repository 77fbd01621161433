// Comparing HdrHistogram histograms count for count, and reading the one --json-histogram wrote.
namespace NetZlink.Stress.Tests.Support;

internal static class Histograms
{
    /// <summary>Every non-empty bucket as (the highest value it stands for, its count), lowest first.</summary>
    public static (long Value, long Count)[] Buckets(HistogramBase histogram) =>
        histogram.RecordedValues().Select(v => (v.ValueIteratedTo, v.CountAtValueIteratedTo)).ToArray();

    /// <summary>The histogram in a summary object written with --json-histogram.</summary>
    public static HistogramBase FromSummary(JsonElement run) =>
        LatencyHistograms.FromLog(run.GetProperty(MergeInputJson.HistogramName).GetString()!);

    /// <summary>A histogram of <paramref name="count"/> pseudo-random values (the same for the same <paramref name="variant"/>), a long tail included.</summary>
    public static LongHistogram Filled(int variant, int count)
    {
        LongHistogram histogram = LatencyHistograms.Create();
        var random = new Random(variant);
        for (int i = 0; i < count; i++)
        {
            LatencyHistograms.Record(histogram, random.NextInt64(50_000, 5_000_000) * (random.Next(100) == 0 ? 20 : 1));
        }

        return histogram;
    }

    /// <summary>µs with 2 decimals, as the result fields print them.</summary>
    public static string Us(double nanoseconds) =>
        (nanoseconds / 1000.0).ToString("F2", System.Globalization.CultureInfo.InvariantCulture);
}
