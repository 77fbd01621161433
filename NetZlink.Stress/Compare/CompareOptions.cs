// What one `compare` command line asks for, after parsing and validation.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>A validated `compare` command line.</summary>
/// <param name="OutDirectory">--out: where every run's files and the reports go.</param>
/// <param name="Stacks">--stacks, in report order.</param>
/// <param name="Scenarios">--scenarios (s0, s1, s2), in run order.</param>
/// <param name="Settings">The scenario flags every run shares (Scenario, stacks and port are set per run).</param>
/// <param name="Quiet">--quiet: no progress lines from the runs (the k-of-n lines stay).</param>
internal sealed record CompareOptions(
    string OutDirectory,
    IReadOnlyList<string> Stacks,
    IReadOnlyList<string> Scenarios,
    ScenarioSettings Settings,
    bool Quiet);
