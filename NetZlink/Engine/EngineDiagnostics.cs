// The names under which the engines publish their metrics and spans, for code that subscribes to
// them without NetZlink.OpenTelemetry (a MeterListener, an ActivityListener, dotnet-counters).
namespace NetZlink.Engine;

/// <summary>The names of the engines' <c>Meter</c> and <c>ActivitySource</c> (both "NetZlink"); see docs/hosting.md.</summary>
public static class EngineDiagnostics
{
    /// <summary>The <see cref="System.Diagnostics.Metrics.Meter"/> of every engine's counters.</summary>
    public const string MeterName = EngineMetrics.MeterName;

    /// <summary>The <see cref="System.Diagnostics.ActivitySource"/> of every engine's spans.</summary>
    public const string ActivitySourceName = EngineTracing.SourceName;
}
