// report.md and report.html from sample summaries: the reference fields per stack and scenario,
// the ratios, the failures, and an HTML page that stands alone (no URL, script or external file).
namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class ReportTests
{
    private TempDirectory _temp = null!;
    private CompareReport _report = null!;

    [SetUp]
    public void SetUp()
    {
        _temp = new TempDirectory();
        _report = SampleCompare.Build(_temp);
    }

    [TearDown]
    public void TearDown() => _temp.Dispose();

    [Test]
    [CancelAfter(10_000)]
    public void MarkdownHasARowPerStackAndScenarioWithTheSchemasReportFieldsAndRatios()
    {
        string md = MarkdownReport.Render(_report);
        string[] lines = md.Split('\n');

        Assert.Multiple(() =>
        {
            Assert.That(lines, Has.One.EqualTo("| stack | scenario | ccu | inflight | size | connect_success | connect_fail | connect_timeout | sent | recv | incomplete_ratio | throughput | p50_us | p95_us | p99_us | pass_fail | p999_us | cpu_s | peak_rss_mb | rate | late | throughput / dotnet | p99 / dotnet |"));
            Assert.That(lines, Has.One.EqualTo("| netzlink | s2 | 200 | 30 | 1024 | 200 | 0 | 0 | 1000 | 1000 | 0.000000 | 300000.00 | 1000.00 | 2000.00 | 4000.00 | PASS | 8000.00 | 1.25 | 40.0 | 0.00 | 0 | 0.50x | 2.00x |"));
            Assert.That(lines, Has.One.StartsWith("| dotnet | s2 |").And.EndsWith("| PASS | 4000.00 | 1.25 | 40.0 | 0.00 | 0 | 1.00x | 1.00x |"));
            Assert.That(lines, Has.One.StartsWith("| c-epoll | s2 |").And.EndsWith("| 1.25 | 40.0 | 0.00 | 0 | 2.00x | 0.50x |"));
            Assert.That(lines, Has.One.StartsWith("| c-uring | s2 |").And.EndsWith("| 1.25 | 40.0 | 0.00 | 0 | 2.50x | 0.40x |"));
            Assert.That(lines, Has.One.EqualTo("| scenario | netzlink/dotnet throughput | netzlink/dotnet p99 | netzlink/c-epoll throughput | netzlink/c-epoll p99 | dotnet/c-epoll throughput | netzlink/c-uring throughput | netzlink/c-uring p99 |"));
            Assert.That(lines, Has.One.EqualTo("| s2 | 0.50x | 2.00x | 0.25x | 4.00x | 0.50x | 0.20x | 5.00x |"));
            Assert.That(lines, Has.One.StartsWith("| dotnet | s1 |").And.Contains("| FAIL |"));
            Assert.That(md, Does.Contain("- dotnet s1: connected 150 of 200 (failed 50, timed out 0)"));
            Assert.That(md, Does.Contain("NetZlink.Stress compare --ccu 200"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void MarkdownSaysWhenEveryRunPassed()
    {
        var passing = _report with { Runs = _report.Runs.Where(r => r.Passed).ToArray() };
        Assert.That(MarkdownReport.Render(passing), Does.Contain("None: every run PASSed."));
    }

    [Test]
    [CancelAfter(10_000)]
    public void ARunWithoutResultShowsWhy()
    {
        var broken = _report with { Runs = [.. _report.Runs, new CompareRun("c-epoll", "s0", null, [], "the client exited with code 2")] };
        broken = broken with { Scenarios = ["s0", .. _report.Scenarios] };

        string md = MarkdownReport.Render(broken);

        Assert.That(md, Does.Contain("| c-epoll | s0 | - |").And.Contain("NO RESULT"));
        Assert.That(md, Does.Contain("- c-epoll s0: the client exited with code 2"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void HtmlIsSelfContained()
    {
        string html = HtmlReport.Render(_report);

        Assert.Multiple(() =>
        {
            Assert.That(html, Does.StartWith("<!DOCTYPE html>"));
            foreach (string external in new[] { "http:", "https:", "//", "<script", "<link", "src=", "@import", "url(", "<img", "<iframe" })
            {
                Assert.That(html, Does.Not.Contain(external).IgnoreCase, $"the page must not reach outside itself ({external})");
            }

            Assert.That(Regex.Count(html, "<svg "), Is.EqualTo(3), "three charts");
            Assert.That(html, Does.Contain("<style>"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void HtmlChartsCarryEachStacksFigures()
    {
        string html = HtmlReport.Render(_report);
        string[] charts = Regex.Matches(html, "<svg .*?</svg>", RegexOptions.Singleline).Select(m => m.Value).ToArray();

        Assert.Multiple(() =>
        {
            Assert.That(charts[0], Does.Contain("s2 throughput per stack"));
            Assert.That(charts[0], Does.Contain("<title>netzlink throughput: 300000.00 packets/s</title>"));
            Assert.That(charts[0], Does.Contain("<title>c-epoll throughput: 1200000.00 packets/s</title>"));
            // Bars scale with the axis: 1.2M on an axis topped at 1.5M (c-uring's bar) is 0.8 of the 242 px plot.
            Assert.That(charts[0], Does.Match("height=\"193\\.6\" fill=\"[^\"]+\"><title>c-epoll"));
            Assert.That(charts[0], Does.Match("height=\"48\\.4\" fill=\"[^\"]+\"><title>netzlink"));
            Assert.That(charts[1], Does.Contain("<title>dotnet p99: 2000.00 &#181;s</title>"));
            Assert.That(charts[1], Does.Contain(">p99.9</text>"));
            Assert.That(Regex.Count(charts[2], "<polyline "), Is.EqualTo(4), "one line per stack");
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void HtmlEscapesText()
    {
        var odd = _report with { Command = "compare --out \"<dir>\" & more" };
        string html = HtmlReport.Render(odd);
        Assert.That(html, Does.Contain("compare --out &quot;&lt;dir&gt;&quot; &amp; more"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void HtmlWithoutS2SaysThereIsNothingToChart()
    {
        var noS2 = _report with { Runs = _report.Runs.Where(r => r.Scenario != "s2").ToArray(), Scenarios = ["s1"] };
        string html = HtmlReport.Render(noS2);
        Assert.That(html, Does.Contain("nothing to chart").And.Not.Contain("<svg"));
    }
}
