// The one call into the scenario logic; ScenarioRunner.RunClientAsync in the program, a stand-in in tests.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>Runs one client scenario; the signature of <see cref="ScenarioRunner.RunClientAsync"/>.</summary>
internal delegate Task<ScenarioResult> ClientRun(
    ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, CancellationToken cancellationToken);
