// The report's ratios: one stack's figure over another's, on the same scenario. A ratio needs
// both runs and a positive denominator; otherwise there is none (shown as "n/a", never as 0).
using System.Globalization;

namespace NetZlink.Stress.Reports;

/// <summary>Ratio math and formatting.</summary>
internal static class Ratios
{
    /// <summary><paramref name="numerator"/> / <paramref name="denominator"/>, or null when it means nothing.</summary>
    public static double? Of(double? numerator, double? denominator) =>
        numerator is { } n && denominator is { } d && d > 0 && n >= 0 && double.IsFinite(n) && double.IsFinite(d) ? n / d : null;

    /// <summary>Throughput of <paramref name="stack"/> over that of <paramref name="baseline"/> on <paramref name="scenario"/>.</summary>
    public static double? Throughput(CompareReport report, string stack, string baseline, string scenario) =>
        Of(report.Summary(stack, scenario)?.Throughput, report.Summary(baseline, scenario)?.Throughput);

    /// <summary>p99 latency of <paramref name="stack"/> over that of <paramref name="baseline"/> (below 1: lower latency).</summary>
    public static double? P99(CompareReport report, string stack, string baseline, string scenario) =>
        Of(report.Summary(stack, scenario)?.P99, report.Summary(baseline, scenario)?.P99);

    /// <summary>"1.23x"; two significant digits below 0.1 ("0.00041x") so a small ratio never reads as zero; or "n/a".</summary>
    public static string Format(double? ratio) => ratio switch
    {
        null => "n/a",
        { } r when r is > 0 and < 0.1 => r.ToString("G2", CultureInfo.InvariantCulture) + "x",
        { } r => r.ToString("0.00", CultureInfo.InvariantCulture) + "x",
    };
}
