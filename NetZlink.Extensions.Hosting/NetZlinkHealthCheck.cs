// An engine's health, from its state and counters (the rules are in docs/hosting.md):
//   Unhealthy: not started, stopped, faulted, or fewer live connections than
//              Health:MinimumConnections once the startup grace period is over;
//   Degraded:  a client with fewer live connections than it opens (after the grace period), or
//              connect failures (server: refused connections) or protocol errors since the
//              previous check;
//   Healthy:   otherwise (within the grace period a shortfall reads "starting").
using Microsoft.Extensions.Diagnostics.HealthChecks;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

/// <summary>The counters an engine's health check saw last: failures count once, at the first check that sees them.</summary>
internal sealed class NetZlinkHealthState(INetZlinkEngineService service, NetZlinkHealthOptions options)
{
    private readonly Lock _gate = new();
    private long _seenFailures;
    private long _seenProtocolErrors;

    internal HealthCheckResult Evaluate()
    {
        StreamEngine? engine = service.StartedEngine;
        string name = service.Name;
        if (engine is null)
        {
            return HealthCheckResult.Unhealthy($"NetZlink engine '{name}' has not been started");
        }

        if (engine.Fault is { } fault)
        {
            return HealthCheckResult.Unhealthy($"NetZlink engine '{name}' faulted: {fault.Message}", fault);
        }

        if (!engine.IsRunning)
        {
            return HealthCheckResult.Unhealthy($"NetZlink engine '{name}' has stopped");
        }

        EngineCounters c = engine.ReadCounters();
        long live = c.Connected - c.Disconnects;
        long failures = c.ConnectFailed + c.ConnectTimedOut;
        long newFailures, newProtocolErrors;
        lock (_gate)
        {
            newFailures = failures - _seenFailures;
            newProtocolErrors = c.ProtocolErrors - _seenProtocolErrors;
            _seenFailures = failures;
            _seenProtocolErrors = c.ProtocolErrors;
        }

        var data = new Dictionary<string, object>
        {
            ["live_connections"] = live,
            ["connected"] = c.Connected,
            ["connect_failures"] = failures,
            ["protocol_errors"] = c.ProtocolErrors,
            ["disconnects"] = c.Disconnects,
        };
        bool inGrace = service.Time.GetUtcNow() - service.StartedAt!.Value < options.StartupGracePeriod;
        int minimum = options.MinimumConnections ?? (service.IsClient ? 1 : 0);
        int expected = service.ExpectedConnections;
        if (!inGrace && live < minimum)
        {
            return HealthCheckResult.Unhealthy($"NetZlink engine '{name}': {live} live connections, at least {minimum} expected (Health:MinimumConnections) after the startup grace period", data: data);
        }

        var problems = new List<string>();
        if (service.IsClient && !inGrace && live < expected)
        {
            problems.Add($"{live} of {expected} connections are up");
        }

        if (newFailures > 0)
        {
            problems.Add(service.IsClient
                ? $"{newFailures} connections failed to connect since the previous check"
                : $"{newFailures} connections were refused (MaxConnections) since the previous check");
        }

        if (newProtocolErrors > 0)
        {
            problems.Add($"{newProtocolErrors} connections were closed for protocol errors since the previous check");
        }

        if (problems.Count > 0)
        {
            return HealthCheckResult.Degraded($"NetZlink engine '{name}': {string.Join("; ", problems)}", data: data);
        }

        string shortfall = inGrace && (live < minimum || (service.IsClient && live < expected)) ? " (starting: within the startup grace period)" : string.Empty;
        return HealthCheckResult.Healthy($"NetZlink engine '{name}': {live} live connections{shortfall}", data);
    }
}

/// <summary>The health check of one hosted engine (registered by <c>AddNetZlinkHealthChecks</c>).</summary>
internal sealed class NetZlinkHealthCheck(INetZlinkEngineService service) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
        => Task.FromResult(service.Health.Evaluate());
}
