// What one command line asks for, after parsing and validation.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Cli;

/// <summary>A validated command line.</summary>
/// <param name="Scenario">The --scenario value: s0, s1, s2, or the sweeps s3 and s4.</param>
/// <param name="Role">The --role value.</param>
/// <param name="Settings">Every run's starting point; for s3/s4 its Scenario is s2 and <see cref="SweepPlan"/> varies it.</param>
/// <param name="MetricsCsvPath">--metrics-csv, or null.</param>
/// <param name="SummaryJsonPath">--summary-json, or null.</param>
/// <param name="Quiet">--quiet: no progress lines.</param>
/// <param name="TimeseriesCsvPath">--timeseries-csv, or null.</param>
internal sealed record StressInvocation(
    string Scenario,
    StressRole Role,
    ScenarioSettings Settings,
    string? MetricsCsvPath,
    string? SummaryJsonPath,
    bool Quiet,
    string? TimeseriesCsvPath = null)
{
    /// <summary>--json-histogram: --summary-json also carries the latency histogram and the fields `merge` needs.</summary>
    public bool JsonHistogram { get; init; }

    /// <summary>--exit-on-stdin-eof: --role server also stops when its stdin reaches end of file.</summary>
    public bool ExitOnStdinEof { get; init; }

    /// <summary>--processes: client processes the run is split over (1: this process is the client).</summary>
    public int Processes { get; init; } = 1;

    /// <summary>--server-processes: echo server children --role both starts.</summary>
    public int ServerProcesses { get; init; } = 1;
}
