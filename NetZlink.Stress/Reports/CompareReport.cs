// Everything the Markdown and HTML reports show: the shared settings and every run, with the
// ratios each row needs.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Reports;

/// <summary>The runs of one compare and how to look them up.</summary>
/// <param name="Settings">The scenario flags every run shared.</param>
/// <param name="Stacks">The stacks, in report order.</param>
/// <param name="Scenarios">The scenarios, in report order.</param>
/// <param name="Runs">Every run.</param>
/// <param name="Command">The command line that made it, for the report's header.</param>
/// <param name="StartedUtc">When the compare started.</param>
internal sealed record CompareReport(
    ScenarioSettings Settings,
    IReadOnlyList<string> Stacks,
    IReadOnlyList<string> Scenarios,
    IReadOnlyList<CompareRun> Runs,
    string Command,
    DateTime StartedUtc)
{
    /// <summary>Stacks asked for that could not run here, each "stack skipped: why" (c-uring where io_uring is refused).</summary>
    public IReadOnlyList<string> Skipped { get; init; } = [];

    /// <summary>The run of <paramref name="stack"/> on <paramref name="scenario"/>, if there was one.</summary>
    public CompareRun? Find(string stack, string scenario) =>
        Runs.FirstOrDefault(r => r.Stack == stack && r.Scenario == scenario);

    /// <summary>The summary of that run, if it wrote one.</summary>
    public RunSummary? Summary(string stack, string scenario) => Find(stack, scenario)?.Summary;
}
