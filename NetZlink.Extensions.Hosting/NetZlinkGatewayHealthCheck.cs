// A hosted gateway's health (the rules are in docs/hosting.md), first rule that applies:
//   Unhealthy: not started, stopped; after the startup grace period, no registry heard from within
//              RegistryTimeout;
//   Degraded:  after the grace period, a configured service without receivers, or some registries
//              silent while others are heard; SERVICE_LIST messages the discovery refused since
//              the previous check;
//   Healthy:   otherwise (within the grace period a shortfall reads "starting").
// When each registry was last heard is the discovery's own record (ZlinkDiscovery.Registries: its
// last well-formed SERVICE_LIST, on the service's TimeProvider).
using Microsoft.Extensions.Diagnostics.HealthChecks;
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

/// <summary>What a gateway's health check remembers between checks: the discovery's refusals seen last.</summary>
internal sealed class NetZlinkGatewayHealthState(NetZlinkGatewayService service)
{
    private readonly Lock _gate = new();
    private long _seenRefusals;

    internal HealthCheckResult Evaluate()
    {
        string name = service.Name;
        if (service.IsStopped)
        {
            return HealthCheckResult.Unhealthy($"NetZlink gateway '{name}' has stopped");
        }

        if (service.StartedAt is not { } started)
        {
            return HealthCheckResult.Unhealthy($"NetZlink gateway '{name}' has not been started");
        }

        NetZlinkGatewayOptions options = service.Options;
        DateTimeOffset now = service.Time.GetUtcNow();
        bool inGrace = now - started < options.Health.StartupGracePeriod;
        ZlinkDiscovery discovery;
        IReadOnlyList<RegistryContact> registries;
        try
        {
            discovery = service.Discovery;
            registries = discovery.Registries;
        }
        catch (ObjectDisposedException)
        {
            return HealthCheckResult.Unhealthy($"NetZlink gateway '{name}' has stopped");
        }

        // Silent: never heard, or not within RegistryTimeout.
        string[] silent = [.. registries.Where(r => r.LastHeard is not { } heardAt || now - heardAt > options.RegistryTimeout).Select(r => r.Endpoint)];
        int heard = registries.Count - silent.Length;
        var receivers = options.Services.Distinct(StringComparer.Ordinal).ToDictionary(s => s, discovery.ReceiverCount, StringComparer.Ordinal);
        long refusals = discovery.RefusedMessages;
        long newRefusals;
        lock (_gate)
        {
            newRefusals = refusals - _seenRefusals;
            _seenRefusals = refusals;
        }

        var data = new Dictionary<string, object>
        {
            ["registries_heard"] = heard,
            ["registries"] = registries.Count,
            ["refused_messages"] = refusals,
        };
        foreach ((string service1, int count) in receivers)
        {
            data["receivers:" + service1] = count;
        }

        if (heard == 0 && !inGrace)
        {
            return HealthCheckResult.Unhealthy(
                $"NetZlink gateway '{name}': no registry heard from within {options.RegistryTimeout:c} ({string.Join(", ", silent)}) after the startup grace period", data: data);
        }

        string[] without = [.. receivers.Where(r => r.Value == 0).Select(r => r.Key)];
        var problems = new List<string>();
        if (!inGrace && heard > 0 && silent.Length > 0)
        {
            problems.Add($"{silent.Length} of {registries.Count} registries not heard from within {options.RegistryTimeout:c} ({string.Join(", ", silent)})");
        }

        if (!inGrace && heard > 0 && without.Length > 0)
        {
            problems.Add($"no receivers of {string.Join(", ", without)}");
        }

        if (newRefusals > 0)
        {
            problems.Add($"{newRefusals} registry messages refused since the previous check (last: {discovery.LastRefusal})");
        }

        if (problems.Count > 0)
        {
            return HealthCheckResult.Degraded($"NetZlink gateway '{name}': {string.Join("; ", problems)}", data: data);
        }

        string shortfall = inGrace && (silent.Length > 0 || without.Length > 0) ? " (starting: within the startup grace period)" : string.Empty;
        string listing = receivers.Count == 0 ? "no services configured" : "receivers: " + string.Join(", ", receivers.Select(r => $"{r.Key} {r.Value}"));
        return HealthCheckResult.Healthy($"NetZlink gateway '{name}': {heard} of {registries.Count} registries heard, {listing}{shortfall}", data);
    }
}

/// <summary>The health check of one hosted gateway (registered by <c>AddNetZlinkHealthChecks</c>).</summary>
internal sealed class NetZlinkGatewayHealthCheck(NetZlinkGatewayService service) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
        => Task.FromResult(service.Health.Evaluate());
}
