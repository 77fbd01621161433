// What one `merge` command line asks for, after parsing.
namespace NetZlink.Stress.Merge;

/// <summary>A validated `merge` command line.</summary>
/// <param name="Inputs">The hosts' --summary-json files, in the order given (the first is the reference for checks).</param>
/// <param name="MetricsCsvPath">--metrics-csv: append the merged row here, or null.</param>
/// <param name="SummaryJsonPath">--summary-json: write the merged result (with its histogram) here, or null.</param>
/// <param name="ScenarioId">--scenario-id: the merged result's id, or null for the hosts' common one.</param>
internal sealed record MergeOptions(
    IReadOnlyList<string> Inputs,
    string? MetricsCsvPath,
    string? SummaryJsonPath,
    string? ScenarioId);
