// One hosted receiver: a ZlinkReceiver on the application's shared ZlinkContext, made from the
// validated options when first asked for (injecting it makes it when the host gathers its
// services). When the host starts, it binds and connects to the registry, and registers every
// configured service in the background (a REGISTER without an answer within RegisterTimeout is sent
// again, so a registry that starts later is found). When the host begins to stop (StoppingAsync, which
// the host calls on every lifecycle service before it stops any), it unregisters every service and
// keeps serving for DrainDelay, so the gateways learn that it left while the application's services
// still answer what is on the way; then the application's services stop, then this one disposes
// the receiver.
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// A <see cref="ZlinkReceiver"/> that runs with the host (registered by <c>AddNetZlinkReceiver</c> and
/// its keyed form): it binds, connects to the registry and registers the configured services when the
/// host starts, unregisters them when the host begins to stop, and disposes the receiver when it stops.
/// The application reads the requests from <see cref="ZlinkReceiver.Requests"/> (or
/// <see cref="ZlinkReceiver.ReceiveAsync"/>) and answers with <see cref="ZlinkReceiver.Send(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>.
/// </summary>
public sealed class NetZlinkReceiverService : IHostedLifecycleService, IAsyncDisposable, IDisposable
{
    private readonly IServiceProvider _services;
    private readonly string _optionsName;
    private readonly Lock _gate = new();
    private readonly CancellationTokenSource _stopRegistering = new();
    private NetZlinkReceiverOptions? _options;
    private ZlinkReceiver? _receiver;
    private Task _registering = Task.CompletedTask;
    private RegistrationState[] _states = [];
    private long _startedAtTicks; // UTC ticks; 0 until started
    private long _seenRefusals;
    private int _phase; // 0 made, 1 started, 2 unregistered (stopping), 3 stopped

    internal NetZlinkReceiverService(IServiceProvider services, string? key, string optionsName)
    {
        _services = services;
        Key = key;
        _optionsName = optionsName;
        Time = services.GetService<TimeProvider>() ?? TimeProvider.System;
    }

    /// <summary>The registration's key; null for the receiver registered without one.</summary>
    public string? Key { get; }

    /// <summary>The name in the health check's descriptions: the key, else <c>receiver</c>.</summary>
    public string Name => Key ?? "receiver";

    /// <summary>The receiver, made on first use from the validated options (it binds and registers when the host starts it).</summary>
    /// <exception cref="OptionsValidationException">The settings are invalid.</exception>
    /// <exception cref="ObjectDisposedException">The host has stopped the receiver.</exception>
    public ZlinkReceiver Receiver
    {
        get
        {
            lock (_gate)
            {
                ObjectDisposedException.ThrowIf(_phase == 3, this);
                return _receiver ??= new ZlinkReceiver(_services.GetRequiredService<ZlinkContext>(), Options.Receiver);
            }
        }
    }

    /// <summary>When the host started the receiver; null before.</summary>
    public DateTimeOffset? StartedAt => Volatile.Read(ref _startedAtTicks) is long ticks and not 0 ? new DateTimeOffset(ticks, TimeSpan.Zero) : null;

    internal TimeProvider Time { get; }

    internal NetZlinkReceiverOptions Options => _options ??= _services.GetRequiredService<IOptionsMonitor<NetZlinkReceiverOptions>>().Get(_optionsName);

    /// <summary>Binds the receiver, connects it to the registry and begins registering every configured service.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        ZlinkReceiver receiver = Receiver;
        NetZlinkReceiverOptions options = Options;
        receiver.Bind(options.BindEndpoint!);
        await receiver.ConnectRegistryAsync(options.RegistryEndpoint!).WaitAsync(cancellationToken).ConfigureAwait(false);
        RegistrationState[] states = [.. options.Services.Select(s => new RegistrationState(s))];
        lock (_gate)
        {
            _states = states;
            _phase = 1;
        }

        Volatile.Write(ref _startedAtTicks, Time.GetUtcNow().UtcTicks);
        _registering = Task.WhenAll(states.Select(s => RegisterAsync(receiver, s, options.RegisterTimeout, _stopRegistering.Token)));
    }

    /// <summary>
    /// When the host begins to stop (before any hosted service stops): unregisters every service, then
    /// keeps serving for <see cref="NetZlinkReceiverOptions.DrainDelay"/> (or until
    /// <paramref name="cancellationToken"/>, the host's shutdown timeout) while the gateways learn it left.
    /// </summary>
    public async Task StoppingAsync(CancellationToken cancellationToken)
    {
        ZlinkReceiver? receiver;
        lock (_gate)
        {
            if (_phase != 1)
            {
                return;
            }

            _phase = 2;
            receiver = _receiver;
        }

        await _stopRegistering.CancelAsync().ConfigureAwait(false);
        await _registering.ConfigureAwait(false);
        foreach (RegistrationState state in _states)
        {
            try
            {
                await receiver!.UnregisterAsync(state.Service.Name!).ConfigureAwait(false);
                state.Set(RegistrationStatus.Unregistered, "unregistered: the host is stopping");
            }
            catch (InvalidOperationException e)
            {
                // Refused by the registry (not registered), or the registry connection cannot take it.
                state.Set(RegistrationStatus.Unregistered, e.Message);
            }
        }

        try
        {
            await Task.Delay(Options.DrainDelay, Time, cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // The host's shutdown timeout: stop serving now.
        }
    }

    /// <summary>Disposes the receiver (its sockets close; requests not yet read from <see cref="ZlinkReceiver.Requests"/> are lost).</summary>
    public async Task StopAsync(CancellationToken cancellationToken) => await DisposeAsync().ConfigureAwait(false);

    /// <inheritdoc/>
    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc/>
    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc/>
    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Disposes the receiver.</summary>
    public async ValueTask DisposeAsync()
    {
        ZlinkReceiver? receiver = Take();
        await _stopRegistering.CancelAsync().ConfigureAwait(false);
        await _registering.ConfigureAwait(false);
        if (receiver is not null)
        {
            await receiver.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Disposes the receiver, waiting for its thread.</summary>
    public void Dispose()
    {
        ZlinkReceiver? receiver = Take();
        _stopRegistering.Cancel();
        _registering.GetAwaiter().GetResult();
        receiver?.Dispose();
    }

    /// <summary>The check's verdict (the rules are in docs/hosting.md).</summary>
    internal HealthCheckResult Evaluate()
    {
        int phase;
        RegistrationState[] states;
        ZlinkReceiver? receiver;
        lock (_gate)
        {
            phase = _phase;
            states = _states;
            receiver = _receiver;
        }

        string name = Name;
        if (phase == 3)
        {
            return HealthCheckResult.Unhealthy($"NetZlink receiver '{name}' has stopped");
        }

        if (phase == 0 || receiver is null || StartedAt is not { } started)
        {
            return HealthCheckResult.Unhealthy($"NetZlink receiver '{name}' has not been started");
        }

        if (phase == 2)
        {
            return HealthCheckResult.Unhealthy($"NetZlink receiver '{name}' has unregistered: the host is stopping");
        }

        bool inGrace = Time.GetUtcNow() - started < Options.Health.StartupGracePeriod;
        long refusals = receiver.RefusedMessages;
        long newRefusals = refusals - Interlocked.Exchange(ref _seenRefusals, refusals);
        (RegistrationStatus Status, string Detail)[] seen = [.. states.Select(s => s.Read())];
        string[] registered = [.. states.Where((_, i) => seen[i].Status == RegistrationStatus.Registered).Select(s => s.Service.Name!)];
        string[] refused = [.. states.Select((s, i) => seen[i].Status == RegistrationStatus.Refused ? $"{s.Service.Name} ({seen[i].Detail})" : null).OfType<string>()];
        string[] pending = [.. states.Select((s, i) => seen[i].Status == RegistrationStatus.Pending ? $"{s.Service.Name} ({seen[i].Detail})" : null).OfType<string>()];
        var data = new Dictionary<string, object>
        {
            ["services"] = states.Length,
            ["registered"] = registered.Length,
            ["refused_messages"] = refusals,
            ["endpoint"] = receiver.BoundEndpoint ?? string.Empty,
        };
        string prefix = $"NetZlink receiver '{name}'";
        if (refused.Length > 0)
        {
            return HealthCheckResult.Unhealthy($"{prefix}: the registry refused {string.Join(", ", refused)}", data: data);
        }

        if (!inGrace && registered.Length == 0)
        {
            return HealthCheckResult.Unhealthy($"{prefix}: no service registered after the startup grace period: {string.Join(", ", pending)}", data: data);
        }

        var problems = new List<string>();
        if (!inGrace && pending.Length > 0)
        {
            problems.Add($"not registered: {string.Join(", ", pending)}");
        }

        if (newRefusals > 0)
        {
            problems.Add($"{newRefusals} registry answers refused since the previous check (last: {receiver.LastRefusal})");
        }

        if (problems.Count > 0)
        {
            return HealthCheckResult.Degraded($"{prefix}: {string.Join("; ", problems)}", data: data);
        }

        string shortfall = pending.Length > 0 ? $", not yet: {string.Join(", ", pending)} (starting: within the startup grace period)" : string.Empty;
        return HealthCheckResult.Healthy($"{prefix} at {receiver.BoundEndpoint}: registered {(registered.Length == 0 ? "none" : string.Join(", ", registered))}{shortfall}", data);
    }

    private static async Task RegisterAsync(ZlinkReceiver receiver, RegistrationState state, TimeSpan timeout, CancellationToken stop)
    {
        NetZlinkReceiverRegistration service = state.Service;
        for (int attempt = 1; !stop.IsCancellationRequested; attempt++)
        {
            using var patience = CancellationTokenSource.CreateLinkedTokenSource(stop);
            patience.CancelAfter(timeout);
            try
            {
                await receiver.RegisterAsync(service.Name!, service.AdvertiseEndpoint, service.Weight, patience.Token).ConfigureAwait(false);
                state.Set(RegistrationStatus.Registered, "registered");
                return;
            }
            catch (OperationCanceledException) when (!stop.IsCancellationRequested)
            {
                state.Set(RegistrationStatus.Pending, $"no answer from the registry within {timeout:c}, {attempt} REGISTER sent");
            }
            catch (ServiceRegistrationException e)
            {
                state.Set(RegistrationStatus.Refused, e.Message);
                return;
            }
            catch (OperationCanceledException)
            {
                return;
            }
            catch (Exception e) when (e is InvalidOperationException or ObjectDisposedException)
            {
                // The registry connection cannot take the REGISTER now (or the receiver is going away).
                state.Set(RegistrationStatus.Pending, e.Message);
                try
                {
                    await Task.Delay(timeout, stop).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }

    private ZlinkReceiver? Take()
    {
        lock (_gate)
        {
            _phase = 3;
            ZlinkReceiver? taken = _receiver;
            _receiver = null;
            return taken;
        }
    }

    private enum RegistrationStatus
    {
        Pending,
        Registered,
        Refused,
        Unregistered,
    }

    /// <summary>Where one configured service's registration stands.</summary>
    private sealed class RegistrationState(NetZlinkReceiverRegistration service)
    {
        private readonly Lock _lock = new();
        private (RegistrationStatus, string) _now = (RegistrationStatus.Pending, "no answer from the registry yet");

        public NetZlinkReceiverRegistration Service => service;

        public (RegistrationStatus Status, string Detail) Read()
        {
            lock (_lock)
            {
                return _now;
            }
        }

        public void Set(RegistrationStatus status, string detail)
        {
            lock (_lock)
            {
                _now = (status, detail);
            }
        }
    }
}

/// <summary>The health check of one hosted receiver (registered by <c>AddNetZlinkHealthChecks</c>).</summary>
internal sealed class NetZlinkReceiverHealthCheck(NetZlinkReceiverService service) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
        => Task.FromResult(service.Evaluate());
}
