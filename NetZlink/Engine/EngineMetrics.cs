// Publishes the counters of every running engine through System.Diagnostics.Metrics (meter
// "NetZlink"), so `dotnet-counters monitor --counters NetZlink -p <pid>` can watch a run. The
// instruments are observable: nothing is recorded on the hot path, values are read on demand,
// one measurement per running engine, tagged with its name (netzlink.engine.name).
using System.Diagnostics.Metrics;

namespace NetZlink.Engine;

internal static class EngineMetrics
{
    internal const string MeterName = "NetZlink";

    private static readonly List<StreamEngine> Engines = new();
    private static readonly Meter Meter = new(MeterName, "0.2.0");

    static EngineMetrics()
    {
        Meter.CreateObservableUpDownCounter("netzlink.engine.connections", () => Sum(c => c.Connected - c.Disconnects), "{connection}", "Established engine connections");
        Meter.CreateObservableCounter("netzlink.engine.connect_failures", () => Sum(c => c.ConnectFailed + c.ConnectTimedOut), "{connection}", "Connections whose every attempt failed");
        Meter.CreateObservableCounter("netzlink.engine.packets_received", () => Sum(c => c.PacketsReceived), "{packet}", "Whole packets received");
        Meter.CreateObservableCounter("netzlink.engine.bytes_received", () => Sum(c => c.BytesReceived), "By", "Bytes received");
        Meter.CreateObservableCounter("netzlink.engine.frames_sent", () => Sum(c => c.FramesSent), "{frame}", "Frames taken by the native sockets");
        Meter.CreateObservableCounter("netzlink.engine.bytes_sent", () => Sum(c => c.BytesSent), "By", "Bytes taken by the native sockets");
        Meter.CreateObservableCounter("netzlink.engine.frames_queued", () => Sum(c => c.FramesQueued), "{frame}", "Frames held for retry after the socket refused them");
        Meter.CreateObservableCounter("netzlink.engine.protocol_errors", () => Sum(c => c.ProtocolErrors), "{connection}", "Connections closed for bytes the framer rejected");
        Meter.CreateObservableCounter("netzlink.engine.reconnects", () => Sum(c => c.Reconnects), "{round}", "Reconnect rounds scheduled for connections that ended (EngineOptions.Reconnect)");
        Meter.CreateObservableCounter("netzlink.engine.reconnect_give_ups", () => Sum(c => c.ReconnectsGaveUp), "{connection}", "Connections whose reconnect rounds ran out");
        Meter.CreateObservableCounter("netzlink.engine.idle_timeouts", () => Sum(c => c.IdleTimeouts), "{connection}", "Connections closed because nothing arrived for EngineOptions.IdleTimeout");
        Meter.CreateObservableCounter("netzlink.engine.receive_budget_exceeded", () => Sum(c => c.ReceiveBudgetExceeded), "{connection}", "Connections closed for holding more bytes of incomplete packets than a receive budget allows");
    }

    internal static void Register(StreamEngine engine)
    {
        lock (Engines)
        {
            Engines.Add(engine);
        }
    }

    internal static void Unregister(StreamEngine engine)
    {
        lock (Engines)
        {
            Engines.Remove(engine);
        }
    }

    /// <summary>The tag every measurement carries.</summary>
    internal const string EngineNameTag = "netzlink.engine.name";

    /// <summary>One measurement per engine name (engines that share a name are summed, so no two measurements carry the same tags).</summary>
    private static List<Measurement<long>> Sum(Func<EngineCounters, long> field)
    {
        var byName = new Dictionary<string, long>(StringComparer.Ordinal);
        lock (Engines)
        {
            foreach (StreamEngine engine in Engines)
            {
                byName[engine.Name] = byName.GetValueOrDefault(engine.Name) + field(engine.ReadCounters());
            }
        }

        var measurements = new List<Measurement<long>>(byName.Count);
        foreach ((string name, long value) in byName)
        {
            measurements.Add(new Measurement<long>(value, new KeyValuePair<string, object?>(EngineNameTag, name)));
        }

        return measurements;
    }
}
