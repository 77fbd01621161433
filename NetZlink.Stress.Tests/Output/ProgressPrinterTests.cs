// The progress line's fixed format.

namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class ProgressPrinterTests
{
    [Test]
    [CancelAfter(10_000)]
    public void FormatIsFixed()
    {
        var snapshot = new ProgressSnapshot("measure", 10000, 412345.4, 412000, 300000, 812.34, 52.44, 1.26);

        Assert.Multiple(() =>
        {
            Assert.That(ProgressPrinter.Format(TimeSpan.FromSeconds(3), snapshot),
                Is.EqualTo("[  3.0s] phase=measure conns=10000 sent/s=412345 recv/s=412000 inflight=300000 p99_us=812.3 rss_mb=52.4 gc_heap_mb=1.3"));
            Assert.That(ProgressPrinter.Format(TimeSpan.FromSeconds(123.45), snapshot), Does.StartWith("[123.5s] "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AWaitForStartAtShowsTheSecondsLeft()
    {
        var waiting = new ProgressSnapshot("wait", 200, 0, 0, 0, 0, StartsInSeconds: 12.34);

        Assert.That(ProgressPrinter.Format(TimeSpan.FromSeconds(1), waiting),
            Is.EqualTo("[  1.0s] phase=wait conns=200 sent/s=0 recv/s=0 inflight=0 p99_us=0.0 rss_mb=0.0 gc_heap_mb=0.0 starts_in=12.3s"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void ReportWritesOneLineAtOnce()
    {
        using var writer = new StringWriter();
        var printer = new ProgressPrinter(writer);

        printer.Report(new ProgressSnapshot("connect", 5, 0, 0, 0, 0));

        Assert.That(writer.ToString(), Does.Match(@"^\[ +\d+\.\ds\] phase=connect conns=5 sent/s=0 recv/s=0 inflight=0 p99_us=0\.0 rss_mb=0\.0 gc_heap_mb=0\.0\r?\n$"));
    }
}
