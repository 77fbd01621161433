// The report's ratio math: which runs divide by which, and when there is no ratio at all.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class RatiosTests
{
    [TestCase(3.0, 2.0, 1.5)]
    [TestCase(0.0, 2.0, 0.0)]
    public void OfDivides(double numerator, double denominator, double expected) =>
        Assert.That(Ratios.Of(numerator, denominator), Is.EqualTo(expected).Within(1e-12));

    [TestCase(1.0, 0.0)]
    [TestCase(1.0, -1.0)]
    [TestCase(-1.0, 1.0)]
    [TestCase(double.NaN, 1.0)]
    public void OfHasNoRatioWithoutAPositiveDenominator(double numerator, double denominator) =>
        Assert.That(Ratios.Of(numerator, denominator), Is.Null);

    [Test]
    public void OfHasNoRatioWhenARunIsMissing()
    {
        Assert.That(Ratios.Of(null, 1), Is.Null);
        Assert.That(Ratios.Of(1, null), Is.Null);
    }

    [TestCase(1.5, "1.50x")]
    [TestCase(0.00041, "0.00041x")]
    [TestCase(125.314, "125.31x")]
    public void FormatKeepsSmallRatiosVisible(double ratio, string expected) =>
        Assert.That(Ratios.Format(ratio), Is.EqualTo(expected));

    [Test]
    public void FormatOfNoRatioIsNotApplicable() => Assert.That(Ratios.Format(null), Is.EqualTo("n/a"));

    [Test]
    [CancelAfter(10_000)]
    public void StackRatiosDivideTheRightRuns()
    {
        using var temp = new TempDirectory();
        var report = SampleCompare.Build(temp);

        Assert.Multiple(() =>
        {
            // netzlink 300k/s and p99 4000 µs against dotnet 600k/s, 2000 µs and c-epoll 1.2M/s, 1000 µs.
            Assert.That(Ratios.Throughput(report, "netzlink", "dotnet", "s2"), Is.EqualTo(0.5).Within(1e-12));
            Assert.That(Ratios.P99(report, "netzlink", "dotnet", "s2"), Is.EqualTo(2.0).Within(1e-12));
            Assert.That(Ratios.Throughput(report, "netzlink", "c-epoll", "s2"), Is.EqualTo(0.25).Within(1e-12));
            Assert.That(Ratios.P99(report, "netzlink", "c-epoll", "s2"), Is.EqualTo(4.0).Within(1e-12));
            // s1 moves no packets: no throughput ratio rather than 0 or infinity.
            Assert.That(Ratios.Throughput(report, "netzlink", "dotnet", "s1"), Is.Null);
            Assert.That(Ratios.Throughput(report, "netzlink", "dotnet", "s0"), Is.Null);
        });
    }
}
