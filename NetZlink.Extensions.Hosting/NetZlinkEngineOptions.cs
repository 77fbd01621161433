// The settings of one hosted engine, as configuration holds them: the engine's own settings
// (EngineOptions) at the level of the section, beside the hosting ones (ConnectionCount, Channel,
// Health). "NetZlink:Backend:Endpoints:0", "NetZlink:Backend:ConnectionCount",
// "NetZlink:Backend:Health:StartupGracePeriod".
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// What a hosted engine is built from: <see cref="Engine"/> (bound from the configuration section
/// itself, so <c>Endpoints</c>, <c>ConnectRetries</c> and the other <see cref="EngineOptions"/>
/// sit directly in it), <see cref="Channel"/> and <see cref="Health"/>.
/// </summary>
public abstract class NetZlinkEngineOptions
{
    private protected NetZlinkEngineOptions()
    {
    }

    /// <summary>
    /// The engine's settings. Its <see cref="EngineOptions.LoggerFactory"/> is the host's unless set,
    /// and its <see cref="EngineOptions.Name"/> the registration's key unless set.
    /// </summary>
    public EngineOptions Engine { get; set; } = new();

    /// <summary>The channel's settings when the engine is read through a channel (no handler registered).</summary>
    public EngineChannelOptions Channel { get; set; } = new();

    /// <summary>What the engine's health check reports (see docs/hosting.md).</summary>
    public NetZlinkHealthOptions Health { get; set; } = new();
}

/// <summary>A hosted <see cref="ClientEngine"/>: <see cref="NetZlinkEngineOptions"/> and how many connections it opens.</summary>
public sealed class NetZlinkClientEngineOptions : NetZlinkEngineOptions
{
    /// <summary>Connections the engine opens (connection <c>i</c> to endpoint <c>i % Endpoints.Count</c>). Default 1.</summary>
    public int ConnectionCount { get; set; } = 1;
}

/// <summary>A hosted <see cref="ServerEngine"/>: <see cref="NetZlinkEngineOptions"/>.</summary>
public sealed class NetZlinkServerEngineOptions : NetZlinkEngineOptions
{
}

/// <summary>The thresholds of an engine's health check.</summary>
public sealed class NetZlinkHealthOptions
{
    /// <summary>
    /// How long after the engine started a shortfall of connections is not held against it
    /// (connects take time, a peer may start later). Default 30 seconds.
    /// </summary>
    public TimeSpan StartupGracePeriod { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Fewer live connections than this after the grace period is Unhealthy. Null (the default):
    /// 1 for a client engine, 0 for a server engine (a server without clients is not ill).
    /// </summary>
    public int? MinimumConnections { get; set; }
}
