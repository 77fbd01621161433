// --summary-json: the CSV's columns as JSON properties, one object per run, an array for sweeps.

namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class SummaryJsonFileTests
{
    [Test]
    [CancelAfter(10_000)]
    public void OneRunIsOneObjectWithTheCsvColumnsInOrder()
    {
        using JsonDocument json = WriteAndRead(out bool tmpLeft, asArray: false, [SampleResults.Pass()]);
        JsonElement root = json.RootElement;
        Assert.Multiple(() =>
        {
            Assert.That(root.ValueKind, Is.EqualTo(JsonValueKind.Object));
            Assert.That(root.EnumerateObject().Select(p => p.Name), Is.EqualTo(MetricsCsvFile.Header.Split(',')));
            Assert.That(root.GetProperty("scenario_id").GetString(), Is.EqualTo("netzlink-s2"));
            Assert.That(root.GetProperty("ccu").GetInt32(), Is.EqualTo(200));
            Assert.That(root.GetProperty("sent").GetInt64(), Is.EqualTo(3_000_000));
            Assert.That(root.GetProperty("incomplete_ratio").GetRawText(), Is.EqualTo("0.000001"));
            Assert.That(root.GetProperty("throughput").GetRawText(), Is.EqualTo("299999.70"));
            Assert.That(root.GetProperty("p99_us").GetDouble(), Is.EqualTo(2001.1));
            Assert.That(root.GetProperty("errors_by_errno").GetString(), Is.EqualTo("104:3;110:2"));
            Assert.That(root.GetProperty("pass_fail").GetString(), Is.EqualTo("PASS"));
            Assert.That(root.GetProperty("interrupted").GetBoolean(), Is.False);
            Assert.That(root.GetProperty("reason").ValueKind, Is.EqualTo(JsonValueKind.Null));
            Assert.That(tmpLeft, Is.False, "the .tmp file the write goes through is gone");
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void SweepsAreAnArrayAndTheFileIsReplacedEachTime()
    {
        using JsonDocument json = WriteAndRead(out _, asArray: true, [SampleResults.Pass()], [SampleResults.Pass(), SampleResults.Fail()]);
        JsonElement[] runs = json.RootElement.EnumerateArray().ToArray();
        Assert.That(runs, Has.Length.EqualTo(2));
        Assert.Multiple(() =>
        {
            Assert.That(runs[1].GetProperty("scenario_id").GetString(), Is.EqualTo("my run"));
            Assert.That(runs[1].GetProperty("pass_fail").GetString(), Is.EqualTo("FAIL"));
            Assert.That(runs[1].GetProperty("reason").GetString(), Is.EqualTo("drain timed out, 3 \"packets\" left"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void NonFiniteNumbersBecomeNull()
    {
        var result = SampleResults.Pass();
        result.P99Us = double.NaN;
        using var stream = new MemoryStream();

        SummaryJsonFile.WriteTo(stream, [result], asArray: false);

        using JsonDocument json = JsonDocument.Parse(stream.ToArray());
        Assert.That(json.RootElement.GetProperty("p99_us").ValueKind, Is.EqualTo(JsonValueKind.Null));
    }
    [Test]
    [CancelAfter(10_000)]
    public void EachRunWithLatencySamplesGetsItsHgrmBesideTheJson()
    {
        using var temp = new TempDirectory();
        ScenarioResult timed = SampleResults.Pass();
        timed.SetLatency(Histograms.Filled(variant: 3, count: 1_000));
        ScenarioResult sweepRun = SampleResults.Pass();
        sweepRun.Settings = sweepRun.Settings with { ScenarioId = "s3-hwm-300000" };
        sweepRun.SetLatency(Histograms.Filled(variant: 4, count: 10));
        ScenarioResult untimed = SampleResults.Fail();
        untimed.SetLatency(LatencyHistograms.Create());

        SummaryJsonFile.Write(temp.File("one.json"), [timed], asArray: false);
        SummaryJsonFile.Write(temp.File("sweep.json"), [sweepRun, untimed], asArray: true);

        Assert.Multiple(() =>
        {
            Assert.That(File.ReadAllText(temp.File("one.hgrm")), Does.Contain("Total count    =         1000]"));
            Assert.That(File.ReadAllText(temp.File("sweep.s3-hwm-300000.hgrm")), Does.Contain("Total count    =           10]"));
            Assert.That(Directory.GetFiles(temp.Path, "*.hgrm").Select(Path.GetFileName), Is.EquivalentTo(new[] { "one.hgrm", "sweep.s3-hwm-300000.hgrm" }),
                "no .hgrm for a run without samples");
        });
    }

    /// <summary>
    /// Writes each of <paramref name="writes"/> in turn to one summary.json in a scratch folder and
    /// parses the file as the last write left it; <paramref name="tmpLeft"/>: whether the .tmp file the
    /// write goes through is still there.
    /// </summary>
    private static JsonDocument WriteAndRead(out bool tmpLeft, bool asArray, params ScenarioResult[][] writes)
    {
        using var temp = new TempDirectory();
        string path = temp.File("summary.json");
        foreach (ScenarioResult[] runs in writes)
        {
            SummaryJsonFile.Write(path, runs, asArray);
        }

        tmpLeft = File.Exists(path + ".tmp");
        return JsonDocument.Parse(File.ReadAllText(path));
    }
}
