// Checks a hosted gateway's settings when the host starts (ValidateOnStart), as the engines' are
// checked: every bad setting is one failure line that names its configuration key and says what is
// wanted (the keys that bind to nothing are ConfigurationKeyCheck's). The bounds are those
// ZlinkGateway, ZlinkDiscovery and ZlinkReceiver enforce when they are made or used (service names,
// routing ids, TLS), named by key; SettingChecks holds the ones the receiver's check shares.
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

internal static class NetZlinkGatewayOptionsValidator
{
    public static IEnumerable<(string Key, string? Problem)> Problems(NetZlinkGatewayOptions options)
    {
        (string Key, string Endpoint)[] registries = [.. options.AllRegistryEndpoints()];
        if (registries.Length == 0)
        {
            yield return (nameof(NetZlinkGatewayOptions.RegistryEndpoint), "is not set: name the publish endpoint of the registry to follow (RegistryEndpoint, or RegistryEndpoints:0, RegistryEndpoints:1 ... for several)");
        }

        foreach ((string key, string endpoint) in registries)
        {
            yield return (key, SettingChecks.EndpointProblem(endpoint, "a registry's publish endpoint"));
        }

        yield return (nameof(NetZlinkGatewayOptions.RegistryTimeout), SettingChecks.Positive(options.RegistryTimeout));
        for (int i = 0; i < options.Services.Count; i++)
        {
            yield return ($"{nameof(NetZlinkGatewayOptions.Services)}:{i}", SettingChecks.ServiceNameProblem(options.Services[i]));
        }

        foreach ((string service, LoadBalancing strategy) in options.LoadBalancing)
        {
            string key = $"{nameof(NetZlinkGatewayOptions.LoadBalancing)}:{service}";
            yield return (key, SettingChecks.ServiceNameProblem(service) is { } problem ? "names no valid service: the service name " + problem : null);
            yield return (key, strategy is Services.LoadBalancing.RoundRobin or Services.LoadBalancing.Weighted ? null : $"must be RoundRobin or Weighted (is {strategy})");
        }

        GatewayOptions gateway = options.Gateway ?? new GatewayOptions();
        yield return (nameof(GatewayOptions.SendPatience), SettingChecks.Positive(gateway.SendPatience));
        if (gateway.RoutingId is { } rid)
        {
            yield return (nameof(GatewayOptions.RoutingId), rid.Length is >= 1 and <= SettingChecks.MaxTextBytes ? null : $"must have 1 to {SettingChecks.MaxTextBytes} bytes (has {rid.Length})");
        }

        if (gateway.TlsCaFile is null && !gateway.TlsTrustSystem)
        {
            yield return (nameof(GatewayOptions.TlsHostname), gateway.TlsHostname is null ? null : "is set without TlsCaFile or TlsTrustSystem to verify the receivers' certificates against");
        }
        else if (gateway.TlsCaFile is not null)
        {
            yield return (nameof(GatewayOptions.TlsCaFile), SettingChecks.FileProblem(gateway.TlsCaFile));
        }

        TimeSpan grace = options.Health?.StartupGracePeriod ?? TimeSpan.Zero;
        yield return ("Health:StartupGracePeriod", SettingChecks.NotNegative(grace));
    }
}
