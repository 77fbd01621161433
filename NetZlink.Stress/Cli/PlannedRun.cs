// One run of a plan: the settings to run with, or why it is skipped.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Cli;

/// <summary>One client run (with its own echo server when the role is both).</summary>
/// <param name="Settings">Everything the run needs, ScenarioId included for sweep runs.</param>
/// <param name="SkipReason">Non-null when the run cannot happen here (a transport the native library lacks).</param>
internal sealed record PlannedRun(ScenarioSettings Settings, string? SkipReason = null);
