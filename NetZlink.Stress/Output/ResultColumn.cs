// A named output field and how to read it from a result.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>One field of the RESULT/METRIC lines, the CSV and the JSON.</summary>
/// <param name="Name">The field name as printed (name=value, CSV header, JSON property).</param>
/// <param name="Read">Its value for one result.</param>
internal sealed record ResultColumn(string Name, Func<ScenarioResult, FieldValue> Read);
