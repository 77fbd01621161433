// The tools' latency histograms on HdrHistogram: recording allocates nothing, the log text that
// `merge` reads rebuilds a histogram count for count, several hosts' logs merged equal the histogram
// of all their samples, and what cannot be merged exactly is refused.
namespace NetZlink.Stress.Tests.Latency;

[TestFixture]
public sealed class LatencyHistogramsTests
{
    private static readonly double[] Percentiles = [0, 1, 25, 50, 90, 95, 99, 99.9, 99.99, 100];

    [Test]
    [CancelAfter(10_000)]
    public void RecordingAllocatesNothing()
    {
        LongHistogram histogram = LatencyHistograms.Create();
        LatencyHistograms.Record(histogram, 1);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (long i = 0; i < 200_000; i++)
        {
            LatencyHistograms.Record(histogram, (i * 7919) % 50_000_000);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Multiple(() =>
        {
            Assert.That(allocated, Is.Zero);
            Assert.That(histogram.TotalCount, Is.EqualTo(200_001));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ValuesOutsideTheRangeAreClamped()
    {
        LongHistogram histogram = LatencyHistograms.Create();
        LatencyHistograms.Record(histogram, -5);
        LatencyHistograms.Record(histogram, LatencyHistograms.HighestTrackableNs + 99);

        Assert.Multiple(() =>
        {
            Assert.That(histogram.TotalCount, Is.EqualTo(2));
            Assert.That(histogram.GetValueAtPercentile(0), Is.Zero);
            Assert.That(histogram.GetMaxValue(), Is.EqualTo(histogram.HighestEquivalentValue(LatencyHistograms.HighestTrackableNs)));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void PercentilesAreWithinATenthOfAPercent()
    {
        LongHistogram histogram = LatencyHistograms.Create();
        for (long v = 1; v <= 100_000; v++)
        {
            LatencyHistograms.Record(histogram, v * 1_000);
        }

        Assert.Multiple(() =>
        {
            Assert.That(LatencyHistograms.PercentileUs(histogram, 50), Is.EqualTo(50_000).Within(0.1).Percent);
            Assert.That(LatencyHistograms.PercentileUs(histogram, 99), Is.EqualTo(99_000).Within(0.1).Percent);
            Assert.That(LatencyHistograms.MaxUs(histogram), Is.EqualTo(100_000).Within(0.1).Percent);
            Assert.That(LatencyHistograms.MeanUs(histogram), Is.EqualTo(50_000.5).Within(0.1).Percent);
            Assert.That(LatencyHistograms.StdevUs(histogram), Is.EqualTo(28_867.5).Within(0.1).Percent);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AnEmptyHistogramGivesZeros()
    {
        LongHistogram empty = LatencyHistograms.Create();

        Assert.Multiple(() =>
        {
            Assert.That(LatencyHistograms.PercentileUs(empty, 99), Is.Zero);
            Assert.That(LatencyHistograms.MaxUs(empty), Is.Zero);
            Assert.That(LatencyHistograms.MeanUs(empty), Is.Zero);
            Assert.That(LatencyHistograms.StdevUs(empty), Is.Zero);
            Assert.That(LatencyHistograms.FromLog(LatencyHistograms.ToLog(empty, DateTime.UnixEpoch)).TotalCount, Is.Zero);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheLogTextRebuildsTheHistogramCountForCount()
    {
        LongHistogram original = Histograms.Filled(variant: 7, count: 20_000);
        LatencyHistograms.Record(original, 0);
        LatencyHistograms.Record(original, LatencyHistograms.HighestTrackableNs);

        string log = LatencyHistograms.ToLog(original, DateTime.UnixEpoch.AddSeconds(1_800_000_000));
        LongHistogram copy = LatencyHistograms.FromLog(log);

        Assert.Multiple(() =>
        {
            Assert.That(log, Does.StartWith("#[Histogram log format version 1.3]"));
            Assert.That(log, Does.Contain("HIST"), "the base64 of the compressed histogram");
            Assert.That(copy.TotalCount, Is.EqualTo(original.TotalCount));
            Assert.That(Histograms.Buckets(copy), Is.EqualTo(Histograms.Buckets(original)));
        });
    }

    [Test]
    [CancelAfter(30_000)]
    public void HostsLogsMergedEqualTheHistogramOfAllTheirSamples()
    {
        LongHistogram all = LatencyHistograms.Create();
        var logs = new List<string>();
        var random = new Random(11);
        for (int host = 0; host < 4; host++)
        {
            LongHistogram own = LatencyHistograms.Create();
            // Different shapes per host: the merge must not depend on the hosts looking alike.
            long scale = (host + 1) * 40_000L;
            for (int i = 0; i < 10_000 + (host * 3_333); i++)
            {
                long value = (long)(scale * Math.Exp(random.NextDouble() * 4)) + (random.Next(500) == 0 ? 200_000_000 : 0);
                LatencyHistograms.Record(own, value);
                LatencyHistograms.Record(all, value);
            }

            logs.Add(LatencyHistograms.ToLog(own, DateTime.UnixEpoch));
        }

        LongHistogram merged = LatencyHistograms.Merge(logs.Select(LatencyHistograms.FromLog));

        Assert.Multiple(() =>
        {
            Assert.That(merged.TotalCount, Is.EqualTo(all.TotalCount));
            Assert.That(Histograms.Buckets(merged), Is.EqualTo(Histograms.Buckets(all)));
            foreach (double p in Percentiles)
            {
                Assert.That(LatencyHistograms.PercentileUs(merged, p), Is.EqualTo(LatencyHistograms.PercentileUs(all, p)), $"p{p}");
            }

            Assert.That(LatencyHistograms.MaxUs(merged), Is.EqualTo(LatencyHistograms.MaxUs(all)));
            Assert.That(LatencyHistograms.StdevUs(merged), Is.EqualTo(LatencyHistograms.StdevUs(all)).Within(1e-9).Percent);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ALogOfAnotherLayoutOrOfTwoHistogramsIsRefused()
    {
        var coarse = new LongHistogram(1_000_000, 2);
        coarse.RecordValue(5);
        string twoHistograms;
        using (var stream = new MemoryStream())
        {
            using (var writer = new HistogramLogWriter(stream))
            {
                writer.Write(DateTime.UnixEpoch, LatencyHistograms.Create(), LatencyHistograms.Create());
            }

            twoHistograms = new StreamReader(new MemoryStream(stream.ToArray())).ReadToEnd();
        }

        Assert.Multiple(() =>
        {
            Assert.That(() => LatencyHistograms.FromLog(LatencyHistograms.ToLog(coarse, DateTime.UnixEpoch)),
                Throws.TypeOf<InvalidDataException>().With.Message.Contains("cannot be merged exactly"));
            Assert.That(() => LatencyHistograms.FromLog(twoHistograms),
                Throws.TypeOf<InvalidDataException>().With.Message.Contains("the log holds 2 histograms"));
            Assert.That(() => LatencyHistograms.FromLog("RESULT scenario=s2"),
                Throws.TypeOf<InvalidDataException>().With.Message.StartsWith("latency histogram: "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheHgrmIsHdrHistogramsPercentileDistributionInMicroseconds()
    {
        using var temp = new TempDirectory();
        LongHistogram histogram = LatencyHistograms.Create();
        for (long v = 1; v <= 1_000; v++)
        {
            LatencyHistograms.Record(histogram, v * 1_000);
        }

        string path = temp.File("run.hgrm");
        LatencyHistograms.WriteHgrm(path, histogram);

        string[] lines = File.ReadAllLines(path);
        Assert.Multiple(() =>
        {
            Assert.That(lines[0].Split(' ', StringSplitOptions.RemoveEmptyEntries), Is.EqualTo(new[] { "Value", "Percentile", "TotalCount", "1/(1-Percentile)" }));
            Assert.That(lines, Has.Some.Matches(@"^#\[Max\s+=\s+1000\.\d+, Total count\s+=\s+1000\]$"));
            Assert.That(lines, Has.Some.Matches(@"^\s+500\.\d+ 0\.500000000000\s+500\s+2\.00$"));
        });
    }
}
