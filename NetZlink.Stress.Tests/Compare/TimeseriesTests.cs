// --timeseries-csv: the rows the client writes once a second read back as the report's points.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class TimeseriesTests
{
    [Test]
    [CancelAfter(10_000)]
    public void RowsWrittenReadBackAndReachTheNextReporter()
    {
        using var temp = new TempDirectory();
        string path = temp.File("sub/ts.csv");
        var seen = new List<ProgressSnapshot>();
        using (var file = new TimeseriesCsvFile(path, new Collect(seen)))
        {
            file.Report(new ProgressSnapshot("warmup", 20, 1000.5, 990.25, 600, 12, 52.44, 1.26));
            file.Report(new ProgressSnapshot("measure", 20, 2000, 1999, 599, 13));
        }

        string[] lines = File.ReadAllLines(path);
        IReadOnlyList<TimeseriesPoint> points = TimeseriesPoint.ReadAll(path);

        Assert.Multiple(() =>
        {
            Assert.That(lines[0], Is.EqualTo("elapsed,phase,sent_per_s,recv_per_s,inflight,rss_mb,gc_heap_mb"));
            Assert.That(lines[1], Does.Match(@"^\d+\.\d{3},warmup,1000\.50,990\.25,600,52\.4,1\.3$"));
            Assert.That(points.Select(p => p.Phase), Is.EqualTo(new[] { "warmup", "measure" }));
            Assert.That(points[1].ReceivedPerSecond, Is.EqualTo(1999));
            Assert.That(points[1].InFlight, Is.EqualTo(599));
            Assert.That(points[1].Elapsed, Is.GreaterThanOrEqualTo(points[0].Elapsed));
            Assert.That(seen, Has.Count.EqualTo(2));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ABadRowIsAnErrorNamingTheLine()
    {
        using var temp = new TempDirectory();
        string path = temp.File("ts.csv");
        File.WriteAllLines(path, ["elapsed,phase,sent_per_s,recv_per_s,inflight", "1.0,measure,5,5,1", "oops"]);

        var e = Assert.Throws<InvalidDataException>(() => TimeseriesPoint.ReadAll(path))!;
        Assert.That(e.Message, Does.Contain("line 3").And.Contain("'oops'"));
    }

    [Test]
    public void AnAbsentFileIsNoRows() => Assert.That(TimeseriesPoint.ReadAll("/no/such/ts.csv"), Is.Empty);

    private sealed class Collect(List<ProgressSnapshot> into) : IProgress<ProgressSnapshot>
    {
        public void Report(ProgressSnapshot value) => into.Add(value);
    }
}
