// DIR/report.html: one self-contained page (inline CSS, inline SVG drawn by SvgChart, no script,
// font or link to anywhere) with the report's tables and three charts: s2 throughput per stack,
// s2 latency percentiles per stack, and s2 throughput over time per stack.
using System.Globalization;
using NetZlink.Stress.Scenarios;
using System.Net;
using System.Text;

namespace NetZlink.Stress.Reports;

/// <summary>Renders a <see cref="CompareReport"/> as HTML.</summary>
internal static class HtmlReport
{
    private const string ChartScenario = "s2";

    private const string Style = """
        body { font-family: sans-serif; margin: 16px; color: #222; }
        h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; }
        table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
        .wide { overflow-x: auto; }
        th, td { border: 1px solid #ccc; padding: 2px 4px; text-align: right; white-space: nowrap; }
        th { background: #f0f0f0; white-space: normal; vertical-align: bottom; } td:first-child, td:nth-child(2) { text-align: left; }
        td.PASS { color: #1d7a3a; font-weight: bold; } td.FAIL, td.NO { color: #b3261e; font-weight: bold; }
        code { background: #f4f4f4; padding: 1px 4px; font-size: 12px; }
        .note { color: #555; font-size: 13px; }
        svg { display: block; margin: 12px 0; }
        svg .title { font-size: 15px; font-weight: bold; }
        svg .legend { font-size: 12px; }
        svg .xl { font-size: 12px; text-anchor: middle; }
        svg .yl { font-size: 11px; text-anchor: end; }
        svg .val { font-size: 10px; text-anchor: middle; fill: #333; }
        svg .grid { stroke: #e4e4e4; } svg .axis { stroke: #888; }
        """;

    public static string Render(CompareReport report)
    {
        var html = new StringBuilder();
        html.Append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>NetZlink compare</title><style>")
            .Append(Style).Append("</style></head><body>\n");
        html.Append("<h1>NetZlink compare: ").Append(E(string.Join(", ", report.Stacks))).Append("</h1>\n");
        html.Append("<p class=\"note\">").Append(E(string.Create(CultureInfo.InvariantCulture,
            $"Started {report.StartedUtc:yyyy-MM-dd HH:mm:ss} UTC on {Environment.ProcessorCount} cores; each run is a separate echo server process and client process, all with the same flags:")))
            .Append("<br><code>").Append(E(report.Command)).Append("</code><br>")
            .Append(E(string.Join(", ", ReportTables.Settings(report.Settings).Select(p => $"{p.Name} {p.Value}")))).Append("</p>\n");

        Charts(html, report);

        html.Append("<h2>Runs</h2>\n");
        Table(html, ReportTables.Runs(report));
        html.Append("<p class=\"note\">throughput in packets/s, latency in µs; ratios are this stack's figure over ")
            .Append(E(CompareStacks.Baseline)).Append("'s (throughput above 1 and p99 below 1 are better). ")
            .Append(E(ReportTables.ClientUsageNote)).Append("</p>\n");
        foreach (string note in ReportTables.RunNotes(report))
        {
            html.Append("<p class=\"note\">").Append(E(note)).Append("</p>\n");
        }
        html.Append("<h2>Cold start</h2>\n");
        Table(html, ReportTables.ColdStart(report));
        html.Append("<p class=\"note\">").Append(E(ReportTables.ColdStartNote)).Append("</p>\n");
        html.Append("<h2>Server time beside round trip</h2>\n");
        Table(html, ReportTables.ServerTime(report));
        html.Append("<p class=\"note\">").Append(E(ReportTables.ServerTimeNote)).Append("</p>\n");
        html.Append("<h2>Ratios</h2>\n");
        Table(html, ReportTables.RatioTable(report));
        if (ReportTables.TransportCostTable(report) is { Rows.Count: > 0 } cost)
        {
            html.Append("<h2>Transport cost over tcp</h2>\n");
            Table(html, cost);
            html.Append("<p class=\"note\">").Append(E(ReportTables.TransportCostNote)).Append("</p>\n");
        }

        IReadOnlyList<string> problems = ReportTables.Problems(report);
        html.Append("<h2>Failures</h2>\n");
        html.Append(problems.Count == 0 ? "<p>None: every run PASSed.</p>\n"
            : "<ul>" + string.Concat(problems.Select(p => $"<li>{E(p)}</li>")) + "</ul>\n");
        html.Append("</body></html>\n");
        return html.ToString();
    }

    private static void Charts(StringBuilder html, CompareReport report)
    {
        var stacks = report.Stacks.Where(s => report.Summary(s, ChartScenario) is not null).ToArray();
        html.Append("<h2>Charts (").Append(ChartScenario).Append(")</h2>\n");
        if (stacks.Length == 0)
        {
            html.Append("<p class=\"note\">No s2 run wrote a result, so there is nothing to chart.</p>\n");
            return;
        }

        var throughput = new double[stacks.Length, 1];
        string[] percentiles = ["p50", "p95", "p99", "p99.9"];
        var latency = new double[stacks.Length, percentiles.Length];
        for (int i = 0; i < stacks.Length; i++)
        {
            RunSummary s = report.Summary(stacks[i], ChartScenario)!;
            throughput[i, 0] = s.Throughput;
            latency[i, 0] = s.P50;
            latency[i, 1] = s.P95;
            latency[i, 2] = s.P99;
            latency[i, 3] = s.P999;
        }

        html.Append(SvgChart.GroupedBars("s2 throughput per stack", stacks, ["throughput"], throughput, "packets/s", colorByGroup: true)).Append('\n');
        // Milliseconds once the tail reaches 10 ms: "250K µs" reads worse than "250 ms".
        bool inMs = latency.Cast<double>().Any(v => v >= 10_000);
        if (inMs)
        {
            for (int i = 0; i < stacks.Length; i++)
            {
                for (int p = 0; p < percentiles.Length; p++)
                {
                    latency[i, p] /= 1000;
                }
            }
        }

        html.Append(SvgChart.GroupedBars("s2 round-trip latency percentiles per stack", stacks, percentiles, latency, inMs ? "ms" : "µs")).Append('\n');
        var series = stacks
            .Select(s => (s, (IReadOnlyList<(double, double)>)report.Find(s, ChartScenario)!.Series
                .Select(p => (p.Elapsed, p.ReceivedPerSecond)).ToArray()))
            .ToArray();
        html.Append(SvgChart.Lines("s2 echoes received per second over time", series, "seconds since the client started (connect, warm-up, measure, drain)", "packets/s")).Append('\n');
    }

    private static void Table(StringBuilder html, ReportTable table)
    {
        // Long field names may break after '_' or '/', so that the table fits the page.
        html.Append("<div class=\"wide\"><table><tr>")
            .Append(string.Concat(table.Header.Select(h => $"<th>{E(h).Replace("_", "_<wbr>", StringComparison.Ordinal).Replace("/", "/<wbr>", StringComparison.Ordinal)}</th>")))
            .Append("</tr>\n");
        foreach (IReadOnlyList<string> row in table.Rows)
        {
            html.Append("<tr>");
            foreach (string cell in row)
            {
                // pass_fail cells get their colour from the value itself.
                string css = cell is "PASS" or "FAIL" ? $" class=\"{cell}\"" : cell == "NO RESULT" ? " class=\"NO\"" : string.Empty;
                html.Append("<td").Append(css).Append('>').Append(E(cell)).Append("</td>");
            }

            html.Append("</tr>\n");
        }

        html.Append("</table></div>\n");
    }

    private static string E(string text) => WebUtility.HtmlEncode(text);
}
