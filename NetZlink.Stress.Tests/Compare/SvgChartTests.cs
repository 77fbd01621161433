// The charts' axis scale and labels: the top tick covers the data on a 1/2/2.5/5 step.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class SvgChartTests
{
    [TestCase(1_234_567, 1_250_000, 250_000)]
    [TestCase(1_000_000, 1_000_000, 200_000)]
    [TestCase(812.3, 1000, 200)]
    [TestCase(3, 3, 1)]
    [TestCase(0.9, 1, 0.2)]
    public void ScaleTopCoversTheMaximumOnANiceStep(double max, double top, double step)
    {
        (double t, double s) = SvgChart.Scale(max);
        Assert.That(t, Is.EqualTo(top).Within(1e-9));
        Assert.That(s, Is.EqualTo(step).Within(1e-9));
    }

    [TestCase(0.0)]
    [TestCase(double.NaN)]
    [TestCase(-5.0)]
    public void ScaleWithoutDataIsZeroToOne(double max) => Assert.That(SvgChart.Scale(max), Is.EqualTo((1.0, 0.2)));

    [TestCase(1_234_567, "1.23M")]
    [TestCase(25_000, "25K")]
    [TestCase(812.345, "812")]
    [TestCase(0.25, "0.25")]
    [TestCase(0, "0")]
    public void ShortLabels(double value, string expected) => Assert.That(SvgChart.Short(value), Is.EqualTo(expected));

    [Test]
    public void LinesWithoutPointsStillDrawAnAxis()
    {
        string svg = SvgChart.Lines("empty", [("netzlink", [])], "s", "packets/s");
        Assert.That(svg, Does.StartWith("<svg ").And.EndWith("</svg>").And.Not.Contain("<polyline"));
    }
}
