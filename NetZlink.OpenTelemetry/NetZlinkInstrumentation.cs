// AddNetZlinkInstrumentation for both OpenTelemetry provider builders, in their own namespaces as
// OpenTelemetry's instrumentation packages do.
using NetZlink.Engine;

namespace OpenTelemetry.Metrics
{
    /// <summary>Adds NetZlink's engine metrics to a meter provider.</summary>
    public static class NetZlinkMeterProviderBuilderExtensions
    {
        /// <summary>
        /// Listens to the "NetZlink" meter: <c>netzlink.engine.connections</c>, <c>connect_failures</c>,
        /// <c>packets_received</c>, <c>bytes_received</c>, <c>frames_sent</c>, <c>bytes_sent</c>,
        /// <c>frames_queued</c>, <c>protocol_errors</c>, each per engine (<c>netzlink.engine.name</c>).
        /// </summary>
        public static MeterProviderBuilder AddNetZlinkInstrumentation(this MeterProviderBuilder builder)
        {
            ArgumentNullException.ThrowIfNull(builder);
            return builder.AddMeter(EngineDiagnostics.MeterName);
        }
    }
}

namespace OpenTelemetry.Trace
{
    /// <summary>Adds NetZlink's engine spans to a tracer provider.</summary>
    public static class NetZlinkTracerProviderBuilderExtensions
    {
        /// <summary>
        /// Listens to the "NetZlink" activity source: connect attempts, accepts and disconnects, and
        /// the messages an engine samples (<c>EngineOptions.MessageTraceSampleRatio</c>, 0 by default).
        /// </summary>
        public static TracerProviderBuilder AddNetZlinkInstrumentation(this TracerProviderBuilder builder)
        {
            ArgumentNullException.ThrowIfNull(builder);
            return builder.AddSource(EngineDiagnostics.ActivitySourceName);
        }
    }
}
