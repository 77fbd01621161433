// One parameter s3 varies: the values it takes and how to set it.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Cli;

/// <summary>One swept parameter of s3.</summary>
/// <param name="Name">The scenario id part, named after the flag(s).</param>
/// <param name="Values">One run per value.</param>
/// <param name="Apply">Sets the value on a copy of the settings.</param>
internal sealed record ParameterSweep(string Name, IReadOnlyList<int> Values, Func<ScenarioSettings, int, ScenarioSettings> Apply);
