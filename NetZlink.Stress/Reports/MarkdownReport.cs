// DIR/report.md: the comparison table for every stack and scenario, the ratios, and what failed.
using System.Globalization;
using NetZlink.Stress.Scenarios;
using System.Text;

namespace NetZlink.Stress.Reports;

/// <summary>Renders a <see cref="CompareReport"/> as Markdown.</summary>
internal static class MarkdownReport
{
    public static string Render(CompareReport report)
    {
        var md = new StringBuilder();
        md.Append("# NetZlink compare: ").Append(string.Join(", ", report.Stacks)).Append("\n\n");
        md.Append(CultureInfo.InvariantCulture, $"Started {report.StartedUtc:yyyy-MM-dd HH:mm:ss} UTC on {Environment.ProcessorCount} cores; ");
        md.Append("each run is a separate echo server process and client process on this machine, all with the same flags:\n\n");
        md.Append('`').Append(report.Command).Append("`\n\n");
        md.Append(string.Join(", ", ReportTables.Settings(report.Settings).Select(p => $"{p.Name} {p.Value}"))).Append("\n\n");
        md.Append("Stacks: `netzlink` NetZlink's sharded engine and zlink STREAM echo server; `dotnet` plain System.Net.Sockets; ");
        md.Append("`c-epoll` native/bench/limit_echo.c, plain epoll with one thread per side (the practical limit of this machine); ");
        md.Append("`c-uring` the same program on io_uring (multishot recv into provided buffers, one batched submit per loop pass).\n\n");

        md.Append("## Runs\n\n");
        Table(md, ReportTables.Runs(report));
        md.Append("\nthroughput in packets/s, latency in µs; ratios are this stack's figure over `")
            .Append(CompareStacks.Baseline).Append("`'s (throughput above 1 and p99 below 1 are better). ")
            .Append(ReportTables.ClientUsageNote).Append("\n\n");
        foreach (string note in ReportTables.RunNotes(report))
        {
            md.Append(note).Append("\n\n");
        }

        md.Append("## Cold start\n\n");
        Table(md, ReportTables.ColdStart(report));
        md.Append('\n').Append(ReportTables.ColdStartNote).Append("\n\n");
        md.Append("## Server time beside round trip\n\n");
        Table(md, ReportTables.ServerTime(report));
        md.Append('\n').Append(ReportTables.ServerTimeNote).Append("\n\n");

        md.Append("## Ratios\n\n");
        Table(md, ReportTables.RatioTable(report));
        if (ReportTables.TransportCostTable(report) is { Rows.Count: > 0 } cost)
        {
            md.Append("\n## Transport cost over tcp\n\n");
            Table(md, cost);
            md.Append('\n').Append(ReportTables.TransportCostNote).Append('\n');
        }

        IReadOnlyList<string> problems = ReportTables.Problems(report);
        md.Append("\n## Failures\n\n");
        if (problems.Count == 0)
        {
            md.Append("None: every run PASSed.\n");
        }

        foreach (string problem in problems)
        {
            md.Append("- ").Append(Cell(problem)).Append('\n');
        }

        return md.ToString();
    }

    private static void Table(StringBuilder md, ReportTable table)
    {
        md.Append("| ").AppendJoin(" | ", table.Header.Select(Cell)).Append(" |\n");
        md.Append('|').Append(string.Concat(table.Header.Select(_ => "---|"))).Append('\n');
        foreach (IReadOnlyList<string> row in table.Rows)
        {
            md.Append("| ").AppendJoin(" | ", row.Select(Cell)).Append(" |\n");
        }
    }

    // A cell stays one cell: pipes escaped, line breaks flattened.
    private static string Cell(string text) =>
        text.Replace("|", "\\|", StringComparison.Ordinal).Replace('\n', ' ').Replace('\r', ' ');
}
