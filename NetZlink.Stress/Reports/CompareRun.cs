// One (stack, scenario) run of a compare: what it wrote, or why it wrote nothing.
namespace NetZlink.Stress.Reports;

/// <summary>The outcome of one run.</summary>
/// <param name="Stack">netzlink, dotnet or c-epoll.</param>
/// <param name="Scenario">s0, s1 or s2.</param>
/// <param name="Summary">Its summary.json; null when the run produced none.</param>
/// <param name="Series">Its per-second progress.</param>
/// <param name="Error">Why there is no summary, or why the run counts as failed beyond its pass_fail; null if none.</param>
/// <param name="Skip">Why the run was not started (its transport is missing from the native library); null when it ran.</param>
internal sealed record CompareRun(string Stack, string Scenario, RunSummary? Summary, IReadOnlyList<TimeseriesPoint> Series, string? Error, string? Skip = null)
{
    /// <summary>PASS when the run wrote a summary saying so; a SKIP fails nothing either.</summary>
    public bool Passed => Skip is not null || (Error is null && Summary?.PassFail == "PASS");
}
