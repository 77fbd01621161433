// What one `compare` command line asks for, after parsing and validation.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>A validated `compare` command line.</summary>
/// <param name="OutDirectory">--out: where every run's files and the reports go.</param>
/// <param name="Stacks">--stacks, in report order.</param>
/// <param name="Scenarios">The run labels: --scenarios (s0, s1, s2) in run order, then s2-open when --rate is given, once per --transports entry (tcp: as they are; tls: tls-s0, …).</param>
/// <param name="Settings">The scenario flags every run shares (Scenario, stacks and port are set per run); Rate is --rate, which only the s2-open runs get.</param>
/// <param name="Quiet">--quiet: no progress lines from the runs (the k-of-n lines stay).</param>
internal sealed record CompareOptions(
    string OutDirectory,
    IReadOnlyList<string> Stacks,
    IReadOnlyList<string> Scenarios,
    ScenarioSettings Settings,
    bool Quiet)
{
    /// <summary>Every (stack, scenario label) run, in run order (s2-open on every stack: limit_echo has --rate too; c-epoll over tcp only).</summary>
    public IReadOnlyList<(string Stack, string Scenario)> Runs =>
        Scenarios.SelectMany(scenario => Stacks.Where(stack => CompareTransports.Runs(stack, scenario)).Select(stack => (stack, scenario))).ToArray();

    /// <summary>
    /// The scenario and settings a run's client gets for a run label: s2 with --rate for s2-open, the
    /// closed loop otherwise, over the label's transport.
    /// </summary>
    public (string Scenario, ScenarioSettings Settings) ClientRun(string label)
    {
        (string transport, string scenario) = CompareTransports.Split(label);
        ScenarioSettings settings = Settings with { Transport = transport };
        return scenario == CompareCommandLine.OpenScenario ? ("s2", settings) : (scenario, settings with { Rate = 0 });
    }
}
