// --json-histogram's additions to --summary-json: after the CSV's columns, merge_input (with the
// unrounded throughput and the fields the columns lack) and the latency histogram as an HdrHistogram log.

namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class MergeInputJsonTests
{
    [Test]
    [CancelAfter(10_000)]
    public void TheHistogramAndMergeInputFollowTheColumns()
    {
        ScenarioResult result = SampleResults.Pass();
        var latency = LatencyHistograms.Create();
        LatencyHistograms.Record(latency, 812_345);
        LatencyHistograms.Record(latency, 2_001_100);
        result.SetLatency(latency);
        result.BadEchoes = 3;
        result.MeasureStartedAt = 1_800_000_004.25;
        using var stream = new MemoryStream();

        SummaryJsonFile.WriteTo(stream, [result], asArray: false, withHistogram: true);

        using JsonDocument json = JsonDocument.Parse(stream.ToArray());
        JsonElement root = json.RootElement;
        JsonElement input = root.GetProperty(MergeInputJson.Name);
        Assert.Multiple(() =>
        {
            Assert.That(root.EnumerateObject().Select(p => p.Name),
                Is.EqualTo(MetricsCsvFile.Header.Split(',').Append(MergeInputJson.Name).Append(MergeInputJson.HistogramName)));
            Assert.That(input.GetProperty("version").GetInt32(), Is.EqualTo(MergeInputJson.Version));
            Assert.That(input.GetProperty("scenario").GetString(), Is.EqualTo("s2"));
            Assert.That(input.GetProperty("measure_s").GetDouble(), Is.EqualTo(10));
            Assert.That(input.GetProperty("warmup_s").GetDouble(), Is.EqualTo(3));
            Assert.That(input.GetProperty("latency_sample_rate").GetInt32(), Is.EqualTo(16));
            Assert.That(input.GetProperty("bad_echoes").GetInt64(), Is.EqualTo(3));
            Assert.That(input.GetProperty("throughput").GetDouble(), Is.EqualTo(299_999.7049), "unrounded");
            Assert.That(input.GetProperty("start_at").ValueKind, Is.EqualTo(JsonValueKind.Null));
            Assert.That(input.GetProperty("measure_started_at").GetDouble(), Is.EqualTo(1_800_000_004.25));
            Assert.That(Histograms.Buckets(Histograms.FromSummary(root)), Is.EqualTo(Histograms.Buckets(latency)));
        });
    }
}
