// Inline SVG charts for report.html, drawn here so that the page needs nothing from anywhere:
// grouped bars (a single series is a plain bar chart) and lines, each with a zero-based y axis
// on "nice" ticks (1, 2, 2.5, 5 × 10^k), tick labels shortened to K/M, and a legend. The <svg>
// has no xmlns: inside HTML it needs none, and the page stays free of any URL.
using System.Globalization;
using System.Net;
using System.Text;

namespace NetZlink.Stress.Reports;

/// <summary>Draws the report's charts as SVG markup.</summary>
internal static class SvgChart
{
    private const int Width = 900;
    private const int Height = 340;
    private const int Left = 80;
    private const int Right = 20;
    private const int Top = 48;
    private const int Bottom = 50;
    private const int PlotWidth = Width - Left - Right;
    private const int PlotHeight = Height - Top - Bottom;

    /// <summary>Colours for series (or stacks) in order: distinguishable, and legible on white.</summary>
    public static readonly IReadOnlyList<string> Palette = ["#2f6db5", "#d9822b", "#3a9d5d", "#b5405a", "#7a5cb8", "#7f7f7f"];

    /// <summary>
    /// Bars for <paramref name="values"/>[group, series]; <paramref name="colorByGroup"/> colours a
    /// single-series chart by group instead of by series.
    /// </summary>
    public static string GroupedBars(
        string title, IReadOnlyList<string> groups, IReadOnlyList<string> series, double[,] values, string unit, bool colorByGroup = false)
    {
        double max = 0;
        foreach (double v in values)
        {
            max = Math.Max(max, double.IsFinite(v) ? v : 0);
        }

        (double top, double step) = Scale(max);
        var svg = Begin(title, unit, top, step);
        double groupWidth = (double)PlotWidth / Math.Max(1, groups.Count);
        double barWidth = Math.Min(70, groupWidth * 0.8 / Math.Max(1, series.Count));
        for (int g = 0; g < groups.Count; g++)
        {
            double groupLeft = Left + (g * groupWidth) + ((groupWidth - (barWidth * series.Count)) / 2);
            for (int s = 0; s < series.Count; s++)
            {
                double v = double.IsFinite(values[g, s]) ? Math.Max(0, values[g, s]) : 0;
                double h = v / top * PlotHeight;
                double x = groupLeft + (s * barWidth);
                string color = Palette[(colorByGroup ? g : s) % Palette.Count];
                svg.Append(F($"<rect x=\"{x + 1:F1}\" y=\"{Top + PlotHeight - h:F1}\" width=\"{barWidth - 2:F1}\" height=\"{h:F1}\" fill=\"{color}\"><title>{E(groups[g])} {E(series[s])}: {v:F2} {E(unit)}</title></rect>"));
                svg.Append(F($"<text x=\"{x + (barWidth / 2):F1}\" y=\"{Top + PlotHeight - h - 4:F1}\" class=\"val\">{Short(v)}</text>"));
            }

            svg.Append(F($"<text x=\"{Left + (g * groupWidth) + (groupWidth / 2):F1}\" y=\"{Top + PlotHeight + 20}\" class=\"xl\">{E(groups[g])}</text>"));
        }

        if (!colorByGroup && series.Count > 1)
        {
            Legend(svg, series);
        }

        return End(svg);
    }

    /// <summary>One line per series over a shared x axis (seconds) from 0.</summary>
    public static string Lines(string title, IReadOnlyList<(string Name, IReadOnlyList<(double X, double Y)> Points)> series, string xUnit, string yUnit)
    {
        double maxY = series.SelectMany(s => s.Points).Select(p => p.Y).Where(double.IsFinite).DefaultIfEmpty(0).Max();
        double maxX = series.SelectMany(s => s.Points).Select(p => p.X).Where(double.IsFinite).DefaultIfEmpty(0).Max();
        (double top, double step) = Scale(maxY);
        (double right, double xStep) = Scale(maxX);
        var svg = Begin(title, yUnit, top, step);
        for (double x = 0; x <= right + (xStep / 2); x += xStep)
        {
            double px = Left + (x / right * PlotWidth);
            svg.Append(F($"<text x=\"{px:F1}\" y=\"{Top + PlotHeight + 18}\" class=\"xl\">{Short(x)}</text>"));
        }

        svg.Append(F($"<text x=\"{Left + (PlotWidth / 2)}\" y=\"{Height - 8}\" class=\"xl\">{E(xUnit)}</text>"));
        for (int s = 0; s < series.Count; s++)
        {
            string points = string.Join(' ', series[s].Points
                .Where(p => double.IsFinite(p.X) && double.IsFinite(p.Y))
                .Select(p => F($"{Left + (p.X / right * PlotWidth):F1},{Top + PlotHeight - (Math.Max(0, p.Y) / top * PlotHeight):F1}")));
            if (points.Length > 0)
            {
                svg.Append(F($"<polyline points=\"{points}\" fill=\"none\" stroke=\"{Palette[s % Palette.Count]}\" stroke-width=\"2\"/>"));
            }
        }

        Legend(svg, series.Select(s => s.Name).ToArray());
        return End(svg);
    }

    /// <summary>The axis top (a nice number at or above <paramref name="max"/>) and its tick step; 0..1 when there is no data.</summary>
    public static (double Top, double Step) Scale(double max)
    {
        if (!(max > 0) || !double.IsFinite(max))
        {
            return (1, 0.2);
        }

        double raw = max / 5;
        double magnitude = Math.Pow(10, Math.Floor(Math.Log10(raw)));
        double step = new[] { 1, 2, 2.5, 5, 10 }.Select(m => m * magnitude).First(s => s >= raw * 0.999999);
        return (Math.Ceiling((max / step) - 1e-9) * step, step);
    }

    /// <summary>A tick or value label: 1234567 → "1.23M", 2500 → "2.5K", 812.345 → "812", 0.25 → "0.25".</summary>
    public static string Short(double v)
    {
        double a = Math.Abs(v);
        return a >= 1e6 ? F($"{v / 1e6:0.##}M")
            : a >= 1e4 ? F($"{v / 1e3:0.#}K")
            : a >= 100 ? F($"{v:0}")
            : F($"{v:0.##}");
    }

    private static StringBuilder Begin(string title, string unit, double top, double step)
    {
        var svg = new StringBuilder();
        svg.Append(F($"<svg viewBox=\"0 0 {Width} {Height}\" width=\"{Width}\" height=\"{Height}\" role=\"img\" aria-label=\"{E(title)}\">"));
        svg.Append(F($"<text x=\"{Left}\" y=\"22\" class=\"title\">{E(title)}</text>"));
        svg.Append(F($"<text x=\"{Left - 8}\" y=\"{Top - 12}\" class=\"yl\">{E(unit)}</text>"));
        for (double y = 0; y <= top + (step / 2); y += step)
        {
            double py = Top + PlotHeight - (y / top * PlotHeight);
            svg.Append(F($"<line x1=\"{Left}\" x2=\"{Left + PlotWidth}\" y1=\"{py:F1}\" y2=\"{py:F1}\" class=\"grid\"/>"));
            svg.Append(F($"<text x=\"{Left - 8}\" y=\"{py + 4:F1}\" class=\"yl\">{Short(y)}</text>"));
        }

        svg.Append(F($"<line x1=\"{Left}\" x2=\"{Left}\" y1=\"{Top}\" y2=\"{Top + PlotHeight}\" class=\"axis\"/>"));
        svg.Append(F($"<line x1=\"{Left}\" x2=\"{Left + PlotWidth}\" y1=\"{Top + PlotHeight}\" y2=\"{Top + PlotHeight}\" class=\"axis\"/>"));
        return svg;
    }

    private static void Legend(StringBuilder svg, IReadOnlyList<string> names)
    {
        double x = Width - Right;
        for (int i = names.Count - 1; i >= 0; i--)
        {
            // About 7 px a character at the legend's 12 px font, plus the swatch.
            x -= 24 + (names[i].Length * 7);
            svg.Append(F($"<rect x=\"{x:F1}\" y=\"12\" width=\"12\" height=\"12\" fill=\"{Palette[i % Palette.Count]}\"/>"));
            svg.Append(F($"<text x=\"{x + 16:F1}\" y=\"22\" class=\"legend\">{E(names[i])}</text>"));
        }
    }

    private static string End(StringBuilder svg) => svg.Append("</svg>").ToString();

    private static string E(string text) => WebUtility.HtmlEncode(text);

    private static string F(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
