// The settings of one hosted gateway (a ZlinkDiscovery and the ZlinkGateway over it), as
// configuration holds them: the registries to follow, the services the application sends to, and
// the gateway's own settings (GatewayOptions) at the level of the section, beside the hosting ones.
// "NetZlink:Gateway:RegistryEndpoint", "NetZlink:Gateway:Services:0",
// "NetZlink:Gateway:LoadBalancing:echo", "NetZlink:Gateway:SendPatience".
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// What a hosted <see cref="ZlinkGateway"/> (and its <see cref="ZlinkDiscovery"/>) is built from.
/// <see cref="Gateway"/> is bound from the configuration section itself, so <c>SendPatience</c>,
/// <c>TlsCaFile</c>, <c>TlsHostname</c> and <c>TlsTrustSystem</c> sit directly in it.
/// </summary>
public sealed class NetZlinkGatewayOptions
{
    /// <summary>A registry's publish endpoint (<see cref="ZlinkRegistry.PubEndpoint"/>) the discovery follows; with <see cref="RegistryEndpoints"/>, one more.</summary>
    public string? RegistryEndpoint { get; set; }

    /// <summary>Further registries' publish endpoints (the registries of one cluster).</summary>
    public IList<string> RegistryEndpoints { get; } = [];

    /// <summary>A registry not heard from for this long no longer counts, for the discovery and for the health check. Default 90 seconds (three of zlink's default broadcast intervals).</summary>
    public TimeSpan RegistryTimeout { get; set; } = TimeSpan.FromSeconds(90);

    /// <summary>The services the application sends to: the health check wants at least one receiver of each.</summary>
    public IList<string> Services { get; } = [];

    /// <summary>How the receivers of a service are chosen, by service name (round-robin unless named here).</summary>
    public IDictionary<string, LoadBalancing> LoadBalancing { get; } = new Dictionary<string, LoadBalancing>(StringComparer.Ordinal);

    /// <summary>The gateway's own settings (send patience, TLS, routing id).</summary>
    public GatewayOptions Gateway { get; set; } = new();

    /// <summary>What the health check reports (see docs/hosting.md).</summary>
    public NetZlinkServiceHealthOptions Health { get; set; } = new();

    /// <summary>Every registry endpoint: <see cref="RegistryEndpoint"/>, then <see cref="RegistryEndpoints"/>, each with its configuration key.</summary>
    internal IEnumerable<(string Key, string Endpoint)> AllRegistryEndpoints()
    {
        if (RegistryEndpoint is not null)
        {
            yield return (nameof(RegistryEndpoint), RegistryEndpoint);
        }

        for (int i = 0; i < RegistryEndpoints.Count; i++)
        {
            yield return ($"{nameof(RegistryEndpoints)}:{i}", RegistryEndpoints[i]);
        }
    }
}

/// <summary>The threshold of a hosted service's health check (a gateway's).</summary>
public sealed class NetZlinkServiceHealthOptions
{
    /// <summary>
    /// How long after the host started the service a missing registry or receiver is not held
    /// against it (a registry or the receivers may start later). Default 30 seconds.
    /// </summary>
    public TimeSpan StartupGracePeriod { get; set; } = TimeSpan.FromSeconds(30);
}
