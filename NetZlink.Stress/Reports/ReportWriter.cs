// The report generator's one entry point. Reports/ reads what runs wrote (summary.json through
// RunSummary, timeseries.csv through TimeseriesPoint, gathered in a CompareReport) and writes
// report.md and report.html and the RATIOS and TRANSPORT_COST lines; it starts nothing, waits on
// nothing and runs nothing (NetZlink.Stress.Tests checks what its files use). The compare verb
// (Compare/) runs the stacks and calls WriteAsync once at the end.
namespace NetZlink.Stress.Reports;

/// <summary>Writes a compare's reports.</summary>
internal static class ReportWriter
{
    /// <summary>The Markdown report's file name in the compare's folder.</summary>
    public const string MarkdownFile = "report.md";

    /// <summary>The HTML report's file name in the compare's folder.</summary>
    public const string HtmlFile = "report.html";

    /// <summary>
    /// Writes <paramref name="outDirectory"/>/report.md and report.html for <paramref name="report"/>
    /// and prints its RATIOS and TRANSPORT_COST rows to <paramref name="stdout"/>; returns the two paths.
    /// </summary>
    public static async Task<(string Markdown, string Html)> WriteAsync(CompareReport report, string outDirectory, TextWriter stdout)
    {
        string markdown = Path.Combine(outDirectory, MarkdownFile);
        string html = Path.Combine(outDirectory, HtmlFile);
        await File.WriteAllTextAsync(markdown, MarkdownReport.Render(report), CancellationToken.None).ConfigureAwait(false);
        await File.WriteAllTextAsync(html, HtmlReport.Render(report), CancellationToken.None).ConfigureAwait(false);
        PrintRows(stdout, "RATIOS", ReportTables.RatioTable(report));
        PrintRows(stdout, "TRANSPORT_COST", ReportTables.TransportCostTable(report));
        return (markdown, html);
    }

    /// <summary>One stdout line per row of <paramref name="table"/>: the tag, then header=value pairs (spaces in a header as _).</summary>
    private static void PrintRows(TextWriter stdout, string tag, ReportTable table)
    {
        foreach (IReadOnlyList<string> row in table.Rows)
        {
            stdout.WriteLine(tag + " " + string.Join(' ', table.Header.Zip(row, (h, v) => $"{h.Replace(' ', '_')}={v}")));
        }
    }
}
