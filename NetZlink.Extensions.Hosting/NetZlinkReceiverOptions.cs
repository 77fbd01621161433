// The settings of one hosted receiver (a ZlinkReceiver registered with a registry), as configuration
// holds them: where it binds, the registry it registers with, the services it serves (each with its
// weight and the endpoint it advertises), and the receiver's own settings (ReceiverOptions) at the
// level of the section. "NetZlink:Orders:BindEndpoint", "NetZlink:Orders:Services:0:Name",
// "NetZlink:Orders:TlsCertificateFile". The check at start is at the end of this file.
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// What a hosted <see cref="ZlinkReceiver"/> is built from. <see cref="Receiver"/> is bound from the
/// configuration section itself, so <c>HeartbeatInterval</c>, <c>RoutingId</c>,
/// <c>TlsCertificateFile</c> and <c>TlsKeyFile</c> sit directly in it.
/// </summary>
public sealed class NetZlinkReceiverOptions
{
    /// <summary>The endpoint the receiver's ROUTER binds when the host starts (gateways connect to it), e.g. <c>tcp://0.0.0.0:7100</c>.</summary>
    public string? BindEndpoint { get; set; }

    /// <summary>The registry's ROUTER endpoint (<see cref="ZlinkRegistry.RouterEndpoint"/>) the services are registered with.</summary>
    public string? RegistryEndpoint { get; set; }

    /// <summary>The services this receiver serves: each is registered when the host starts and unregistered when it stops.</summary>
    public IList<NetZlinkReceiverRegistration> Services { get; } = [];

    /// <summary>
    /// No longer used: the receiver sends each REGISTER once the registry connection is up (a registry
    /// that starts later is found) and again whenever the connection is made again (a registry that
    /// restarted), so the hosted receiver no longer sends it again on a timer. Still read and checked
    /// (positive) so that configurations that set it keep starting. Default 5 seconds.
    /// </summary>
    public TimeSpan RegisterTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long the receiver keeps serving after it unregistered, when the host begins to stop, before
    /// the host stops the application's services: the gateways learn from the registry that it left
    /// and stop sending to it, and the requests already on the way are still answered. Default 1 second;
    /// the host's shutdown timeout cuts it short. At most <see cref="MaxDrainDelay"/> (one hour).
    /// </summary>
    public TimeSpan DrainDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The longest <see cref="DrainDelay"/> the check at start accepts: one hour (a drain is
    /// seconds; anything longer is a mistake, and the host's shutdown timeout cuts it anyway).</summary>
    public static TimeSpan MaxDrainDelay { get; } = TimeSpan.FromHours(1);

    /// <summary>The receiver's own settings (heartbeat interval, routing id, TLS).</summary>
    public ReceiverOptions Receiver { get; set; } = new();

    /// <summary>What the health check reports (see docs/hosting.md).</summary>
    public NetZlinkServiceHealthOptions Health { get; set; } = new();
}

/// <summary>One service a hosted receiver registers.</summary>
public sealed class NetZlinkReceiverRegistration
{
    /// <summary>The service name (1 to 255 bytes of UTF-8).</summary>
    public string? Name { get; set; }

    /// <summary>Its weight for weighted load balancing (0 counts as 1). Default 1.</summary>
    public uint Weight { get; set; } = 1;

    /// <summary>The endpoint gateways should connect to; null: the bound endpoint, with a <c>*</c> or <c>0.0.0.0</c> host made <c>127.0.0.1</c> (zlink's rule).</summary>
    public string? AdvertiseEndpoint { get; set; }
}

/// <summary>The check at start: one line per bad setting, named by its key.</summary>
internal static class NetZlinkReceiverOptionsValidator
{
    public static IEnumerable<(string Key, string? Problem)> Problems(NetZlinkReceiverOptions options)
    {
        yield return (nameof(NetZlinkReceiverOptions.BindEndpoint), options.BindEndpoint is null
            ? "is not set: name the endpoint gateways connect to (tcp://0.0.0.0:7100, tcp://127.0.0.1:*, tls://, ws://, wss://)"
            : SettingChecks.EndpointProblem(options.BindEndpoint, "a receiver's endpoint"));
        yield return (nameof(NetZlinkReceiverOptions.RegistryEndpoint), options.RegistryEndpoint is null
            ? "is not set: name the registry's ROUTER endpoint to register with"
            : SettingChecks.EndpointProblem(options.RegistryEndpoint, "a registry's ROUTER endpoint"));
        if (options.Services.Count == 0)
        {
            yield return (nameof(NetZlinkReceiverOptions.Services), "is empty: name at least one service to register (Services:0:Name, Services:0:Weight)");
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        for (int i = 0; i < options.Services.Count; i++)
        {
            NetZlinkReceiverRegistration service = options.Services[i];
            string key = $"{nameof(NetZlinkReceiverOptions.Services)}:{i}";
            string? nameProblem = SettingChecks.ServiceNameProblem(service.Name);
            yield return ($"{key}:Name", nameProblem is null && !seen.Add(service.Name!) ? $"is '{service.Name}', registered already by an earlier entry" : nameProblem);
            if (service.AdvertiseEndpoint is not null)
            {
                yield return ($"{key}:AdvertiseEndpoint", SettingChecks.EndpointProblem(service.AdvertiseEndpoint, "an advertised endpoint"));
            }
        }

        yield return (nameof(NetZlinkReceiverOptions.RegisterTimeout), SettingChecks.Positive(options.RegisterTimeout));
        yield return (nameof(NetZlinkReceiverOptions.DrainDelay), options.DrainDelay >= TimeSpan.Zero && options.DrainDelay <= NetZlinkReceiverOptions.MaxDrainDelay
            ? null
            : $"must be from 00:00:00 to {NetZlinkReceiverOptions.MaxDrainDelay:c} (is {options.DrainDelay:c})");
        ReceiverOptions receiver = options.Receiver ?? new ReceiverOptions();
        yield return (nameof(ReceiverOptions.HeartbeatInterval), SettingChecks.Positive(receiver.HeartbeatInterval));
        if (receiver.RoutingId is { } rid)
        {
            yield return (nameof(ReceiverOptions.RoutingId), rid.Length is >= 1 and <= SettingChecks.MaxTextBytes ? null : $"must have 1 to {SettingChecks.MaxTextBytes} bytes (has {rid.Length})");
        }

        bool tlsEndpoint = options.BindEndpoint is { } bind && (bind.StartsWith("tls://", StringComparison.Ordinal) || bind.StartsWith("wss://", StringComparison.Ordinal));
        if (receiver.TlsCertificateFile is null && receiver.TlsKeyFile is null)
        {
            yield return (nameof(NetZlinkReceiverOptions.BindEndpoint), tlsEndpoint ? $"is '{options.BindEndpoint}': a TLS endpoint needs TlsCertificateFile and TlsKeyFile" : null);
        }
        else
        {
            foreach ((string key, string? file) in new[] { (nameof(ReceiverOptions.TlsCertificateFile), receiver.TlsCertificateFile), (nameof(ReceiverOptions.TlsKeyFile), receiver.TlsKeyFile) })
            {
                yield return (key, file is null ? "is not set: a TLS receiver needs both TlsCertificateFile and TlsKeyFile" : SettingChecks.FileProblem(file));
            }
        }

        yield return ("Health:StartupGracePeriod", SettingChecks.NotNegative(options.Health?.StartupGracePeriod ?? TimeSpan.Zero));
    }
}
