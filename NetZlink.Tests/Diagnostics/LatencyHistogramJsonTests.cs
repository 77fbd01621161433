// The histogram's JSON form: a round trip rebuilds every bucket and total exactly, histograms
// rebuilt from several files merge into what one recorder of every value holds, and every way the
// JSON can be wrong is refused with a message naming what is wrong.
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using NetZlink.Diagnostics;

namespace NetZlink.Tests.Diagnostics;

[TestFixture]
public sealed class LatencyHistogramJsonTests
{
    // Every tenth of a percent, and the far tail the output reports (p99.9) and beyond.
    private static readonly double[] Percentiles =
        [.. Enumerable.Range(0, 1001).Select(i => i / 10.0), 99.95, 99.99, 99.999];

    [Test]
    [CancelAfter(10_000)]
    public void RoundTripRebuildsEveryBucketAndTotalExactly()
    {
        LatencyHistogram original = Filled(seed: 7, count: 20_000);
        original.Record(-5);                                     // counts as 0
        original.Record(LatencyHistogram.MaxTrackableValue + 99); // clamped to the largest bucket

        LatencyHistogram copy = RoundTrip(original);

        AssertSame(copy, original, exactMoments: true);
    }

    [Test]
    [CancelAfter(10_000)]
    public void AnEmptyHistogramRoundTrips()
    {
        LatencyHistogram copy = RoundTrip(new LatencyHistogram());

        Assert.Multiple(() =>
        {
            Assert.That(copy.TotalCount, Is.Zero);
            Assert.That(copy.Buckets(), Is.Empty);
            Assert.That(copy.Min, Is.Zero);
            Assert.That(copy.Max, Is.Zero);
            Assert.That(copy.ValueAtPercentile(99), Is.Zero);
        });

        // Recording into the copy behaves as into a fresh histogram (min was not left at 0).
        copy.Record(5000);
        Assert.That(copy.Min, Is.EqualTo(5000));
    }

    [Test]
    [CancelAfter(10_000)]
    public void HistogramsRebuiltFromJsonMergeIntoWhatOneRecorderHolds()
    {
        var random = new Random(11);
        var all = new LatencyHistogram();
        LatencyHistogram[] hosts = [new(), new(), new()];
        for (int i = 0; i < 30_000; i++)
        {
            long value = Value(random);
            all.Record(value);
            hosts[random.Next(hosts.Length)].Record(value);
        }

        var merged = new LatencyHistogram();
        foreach (LatencyHistogram host in hosts)
        {
            merged.Add(RoundTrip(host));
        }

        // The sum of squares is a double summed in another order, so stdev may differ in its last bits.
        AssertSame(merged, all, exactMoments: false);
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheBucketsAreIndexCountPairsOnOneLine()
    {
        var histogram = new LatencyHistogram();
        histogram.Record(3);
        histogram.Record(3);
        histogram.Record(1000);

        string json = Write(histogram);

        Assert.Multiple(() =>
        {
            Assert.That(json, Does.Contain("\"buckets\": [[3,2],[506,1]]"));
            Assert.That(json, Does.Contain("\"version\": 1").And.Contain("\"unit\": \"ns\""));
            Assert.That(json, Does.Contain("\"sub_bucket_bits\": 7").And.Contain("\"max_value_bits\": 40"));
            Assert.That(json, Does.Contain("\"count\": 3").And.Contain("\"min\": 3").And.Contain("\"max\": 1000"));
        });
    }

    [TestCase("version", "2", "version 2 is not one this build reads (1)")]
    [TestCase("version", "\"1\"", "'version' must be a whole number")]
    [TestCase("unit", "\"us\"", "'unit' must be \"ns\"")]
    [TestCase("sub_bucket_bits", "8", "bucket layout sub_bucket_bits=8 max_value_bits=40 is not this build's (7, 40)")]
    [TestCase("count", "4", "the buckets hold 3 values but 'count' is 4")]
    [TestCase("min", "150", "do not fall in the first and last non-empty buckets")]
    [TestCase("max", "2", "count=3 min=3 max=2 are out of range")]
    [TestCase("sum", "-1", "'sum' must be a non-negative number")]
    [TestCase("buckets", "[[3,2],[3,1]]", "'buckets' entry 1 is [3, 1]: indexes must rise")]
    [TestCase("buckets", "[[3,2],[99999,1]]", "'buckets' entry 1 is [99999, 1]")]
    [TestCase("buckets", "[[3,0],[506,3]]", "'buckets' entry 0 is [3, 0]")]
    [TestCase("buckets", "[[3,2,1]]", "'buckets' entry 0 must be [index, count] in whole numbers")]
    [TestCase("buckets", "{}", "'buckets' must be an array of [index, count] pairs")]
    [CancelAfter(10_000)]
    public void BadJsonIsRefusedNamingTheProblem(string property, string value, string expected)
    {
        var histogram = new LatencyHistogram();
        histogram.Record(3);
        histogram.Record(3);
        histogram.Record(1000);
        JsonObject json = JsonNode.Parse(Write(histogram))!.AsObject();
        json[property] = JsonNode.Parse(value);

        var e = Assert.Throws<InvalidDataException>(() => Read(json.ToJsonString()))!;

        Assert.That(e.Message, Does.StartWith("latency histogram: ").And.Contain(expected));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AMissingPropertyOrANonObjectIsRefused()
    {
        JsonObject json = JsonNode.Parse(Write(Filled(seed: 1, count: 10)))!.AsObject();
        json.Remove("sum_of_squares");

        Assert.Multiple(() =>
        {
            Assert.That(() => Read(json.ToJsonString()), Throws.InstanceOf<InvalidDataException>().With.Message.Contains("'sum_of_squares' is missing"));
            Assert.That(() => Read("[1, 2]"), Throws.InstanceOf<InvalidDataException>().With.Message.Contains("expected an object, found a JSON Array"));
        });
    }

    private static LatencyHistogram Filled(int seed, int count)
    {
        var random = new Random(seed);
        var histogram = new LatencyHistogram();
        for (int i = 0; i < count; i++)
        {
            histogram.Record(Value(random));
        }

        return histogram;
    }

    /// <summary>Values over the whole range: the exact sub-bucket zone, microseconds, milliseconds, seconds.</summary>
    private static long Value(Random random) => random.Next(4) switch
    {
        0 => random.Next(256),
        1 => random.NextInt64(1_000, 100_000),
        2 => random.NextInt64(100_000, 50_000_000),
        _ => random.NextInt64(1_000_000_000, 60_000_000_000),
    };

    private static string Write(LatencyHistogram histogram)
    {
        using var stream = new MemoryStream();
        using (var writer = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true }))
        {
            histogram.WriteJson(writer);
        }

        return Encoding.UTF8.GetString(stream.ToArray());
    }

    private static LatencyHistogram Read(string json)
    {
        using JsonDocument document = JsonDocument.Parse(json);
        return LatencyHistogram.ReadJson(document.RootElement);
    }

    private static LatencyHistogram RoundTrip(LatencyHistogram histogram) => Read(Write(histogram));

    private static void AssertSame(LatencyHistogram actual, LatencyHistogram expected, bool exactMoments)
    {
        Assert.Multiple(() =>
        {
            Assert.That(actual.Buckets(), Is.EqualTo(expected.Buckets()));
            Assert.That(actual.TotalCount, Is.EqualTo(expected.TotalCount));
            Assert.That(actual.Min, Is.EqualTo(expected.Min));
            Assert.That(actual.Max, Is.EqualTo(expected.Max));
            foreach (double percentile in Percentiles)
            {
                Assert.That(actual.ValueAtPercentile(percentile), Is.EqualTo(expected.ValueAtPercentile(percentile)), $"p{percentile}");
            }

            if (exactMoments)
            {
                Assert.That(actual.Mean, Is.EqualTo(expected.Mean));
                Assert.That(actual.StandardDeviation, Is.EqualTo(expected.StandardDeviation));
            }
            else
            {
                Assert.That(actual.Mean, Is.EqualTo(expected.Mean).Within(1e-12).Percent);
                Assert.That(actual.StandardDeviation, Is.EqualTo(expected.StandardDeviation).Within(1e-9).Percent);
            }
        });
    }
}
