// A hosted gateway's health (the rules are in docs/hosting.md), first rule that applies:
//   Unhealthy: not started, stopped; after the startup grace period, no registry heard from within
//              RegistryTimeout;
//   Degraded:  after the grace period, a configured service without receivers, or some registries
//              silent while others are heard; SERVICE_LIST messages the discovery refused since
//              the previous check;
//   Healthy:   otherwise (within the grace period a shortfall reads "starting").
// ZlinkDiscovery does not say when it last heard from a registry, so a RegistryWatcher (one SUB
// socket per registry endpoint, beside the discovery's) records when each registry last published.
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

        RegistryWatcher? watcher = service.Watcher;
        if (service.StartedAt is not { } started || watcher is null)
        {
            return HealthCheckResult.Unhealthy($"NetZlink gateway '{name}' has not been started");
        }

        NetZlinkGatewayOptions options = service.Options;
        DateTimeOffset now = service.Time.GetUtcNow();
        bool inGrace = now - started < options.Health.StartupGracePeriod;
        string[] silent = [.. watcher.Silent(now, options.RegistryTimeout)];
        int heard = watcher.Endpoints.Count - silent.Length;
        ZlinkDiscovery discovery;
        try
        {
            discovery = service.Discovery;
        }
        catch (ObjectDisposedException)
        {
            return HealthCheckResult.Unhealthy($"NetZlink gateway '{name}' has stopped");
        }

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
            ["registries"] = watcher.Endpoints.Count,
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
            problems.Add($"{silent.Length} of {watcher.Endpoints.Count} registries not heard from within {options.RegistryTimeout:c} ({string.Join(", ", silent)})");
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
        return HealthCheckResult.Healthy($"NetZlink gateway '{name}': {heard} of {watcher.Endpoints.Count} registries heard, {listing}{shortfall}", data);
    }
}

/// <summary>The health check of one hosted gateway (registered by <c>AddNetZlinkHealthChecks</c>).</summary>
internal sealed class NetZlinkGatewayHealthCheck(NetZlinkGatewayService service) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
        => Task.FromResult(service.Health.Evaluate());
}

/// <summary>
/// When each registry last published (a SERVICE_LIST, at least once per broadcast interval): one
/// SUB socket per registry publish endpoint, read by an async loop. Any message counts as heard;
/// the discovery beside it checks what the messages say.
/// </summary>
internal sealed class RegistryWatcher(ZlinkContext context, IReadOnlyList<string> endpoints, TimeProvider time) : IAsyncDisposable
{
    private readonly long[] _lastHeardTicks = new long[endpoints.Count]; // UTC ticks; 0: never
    private readonly CancellationTokenSource _stop = new();
    private readonly List<ZlinkSocket> _sockets = [];
    private Task[] _loops = [];

    public IReadOnlyList<string> Endpoints => endpoints;

    public void Start()
    {
        try
        {
            foreach (string endpoint in endpoints)
            {
                ZlinkSocket sub = context.CreateSocket(ZlinkSocketType.Sub);
                _sockets.Add(sub);
                sub.Linger = 0;
                sub.Subscribe(ReadOnlySpan<byte>.Empty);
                sub.Connect(endpoint);
            }
        }
        catch
        {
            foreach (ZlinkSocket s in _sockets)
            {
                s.Dispose();
            }

            _sockets.Clear();
            throw;
        }

        _loops = [.. _sockets.Select((s, i) => ReadAsync(s, i))];
    }

    /// <summary>The endpoints of the registries not heard from within <paramref name="timeout"/> before <paramref name="now"/>.</summary>
    public IEnumerable<string> Silent(DateTimeOffset now, TimeSpan timeout)
    {
        for (int i = 0; i < endpoints.Count; i++)
        {
            long ticks = Volatile.Read(ref _lastHeardTicks[i]);
            if (ticks == 0 || now.UtcTicks - ticks > timeout.Ticks)
            {
                yield return endpoints[i];
            }
        }
    }

    private async Task ReadAsync(ZlinkSocket sub, int index)
    {
        try
        {
            while (true)
            {
                _ = await sub.ReceiveMultipartAsync(_stop.Token).ConfigureAwait(false);
                Volatile.Write(ref _lastHeardTicks[index], time.GetUtcNow().UtcTicks);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or ContextTerminatedException)
        {
            // stopped
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        try
        {
            await Task.WhenAll(_loops).ConfigureAwait(false);
        }
        finally
        {
            foreach (ZlinkSocket s in _sockets)
            {
                s.Dispose();
            }

            _stop.Dispose();
        }
    }
}
