// One hosted receiver: a ZlinkReceiver on the application's shared ZlinkContext, made from the
// validated options when first asked for (injecting it makes it when the host gathers its
// services). When the host starts, it binds and connects to the registry, and registers every
// configured service in the background (the receiver sends the REGISTER once the registry connection
// is up, so a registry that starts later is found, and sends it again whenever the connection is
// made again, so a restarted registry lists it again). The health check reads each registration's
// state from the receiver (GetRegistrationState) and the reasons from its RegistrationChanges, which
// this service reads. When the host begins to stop (StoppingAsync, which
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
    private Task _watching = Task.CompletedTask;
    private ServiceTrack[] _tracks = [];
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
        ServiceTrack[] tracks = [.. options.Services.Select(s => new ServiceTrack(s))];
        // Read before the first REGISTER: the receiver keeps the changes from the first read on.
        System.Threading.Channels.ChannelReader<RegistrationChange> changes = receiver.RegistrationChanges;
        lock (_gate)
        {
            _tracks = tracks;
            _phase = 1;
        }

        Volatile.Write(ref _startedAtTicks, Time.GetUtcNow().UtcTicks);
        _watching = WatchAsync(changes, tracks, _stopRegistering.Token);
        _registering = Task.WhenAll(tracks.Select(t => RegisterAsync(receiver, t, _stopRegistering.Token)));
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
        await _watching.ConfigureAwait(false);
        foreach (ServiceTrack track in _tracks)
        {
            try
            {
                await receiver!.UnregisterAsync(track.Service.Name!).ConfigureAwait(false);
            }
            catch (InvalidOperationException)
            {
                // Not registered (never acknowledged and withdrawn, or refused): nothing to withdraw.
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
        await _watching.ConfigureAwait(false);
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
        _watching.GetAwaiter().GetResult();
        receiver?.Dispose();
    }

    /// <summary>The check's verdict (the rules are in docs/hosting.md).</summary>
    internal HealthCheckResult Evaluate()
    {
        int phase;
        ServiceTrack[] tracks;
        ZlinkReceiver? receiver;
        lock (_gate)
        {
            phase = _phase;
            tracks = _tracks;
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

        DateTimeOffset now = Time.GetUtcNow();
        TimeSpan grace = Options.Health.StartupGracePeriod;
        bool inGrace = now - started < grace;
        long refusals = receiver.RefusedMessages;
        long newRefusals = refusals - Interlocked.Exchange(ref _seenRefusals, refusals);
        var registered = new List<string>();
        var refused = new List<string>();
        var pending = new List<string>();
        var reconnecting = new List<string>();
        var lostTooLong = new List<string>();
        foreach (ServiceTrack track in tracks)
        {
            string service = track.Service.Name!;
            (Standing standing, string detail, DateTimeOffset? lostAt) = track.Read(receiver.GetRegistrationState(service), now);
            switch (standing)
            {
                case Standing.Registered:
                    registered.Add(service);
                    break;
                case Standing.Refused:
                    refused.Add($"{service} ({detail})");
                    break;
                case Standing.Reconnecting:
                    TimeSpan lostFor = now - lostAt!.Value;
                    (lostFor >= grace ? lostTooLong : reconnecting).Add($"{service} ({detail}, {lostFor:c} ago)");
                    break;
                default:
                    pending.Add($"{service} ({detail})");
                    break;
            }
        }

        var data = new Dictionary<string, object>
        {
            ["services"] = tracks.Length,
            ["registered"] = registered.Count,
            ["reconnecting"] = reconnecting.Count + lostTooLong.Count,
            ["refused_messages"] = refusals,
            ["endpoint"] = receiver.BoundEndpoint ?? string.Empty,
        };
        string prefix = $"NetZlink receiver '{name}'";
        if (refused.Count > 0)
        {
            return HealthCheckResult.Unhealthy($"{prefix}: registration given up: {string.Join(", ", refused)}", data: data);
        }

        if (lostTooLong.Count > 0)
        {
            return HealthCheckResult.Unhealthy($"{prefix}: not registered again within {grace:c} of losing the registry connection: {string.Join(", ", lostTooLong)}", data: data);
        }

        if (!inGrace && registered.Count == 0 && reconnecting.Count == 0)
        {
            return HealthCheckResult.Unhealthy($"{prefix}: no service registered after the startup grace period: {string.Join(", ", pending)}", data: data);
        }

        var problems = new List<string>();
        if (reconnecting.Count > 0)
        {
            problems.Add($"registry connection lost, registering again: {string.Join(", ", reconnecting)}");
        }

        if (!inGrace && pending.Count > 0)
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

        string shortfall = pending.Count > 0 ? $", not yet: {string.Join(", ", pending)} (starting: within the startup grace period)" : string.Empty;
        return HealthCheckResult.Healthy($"{prefix} at {receiver.BoundEndpoint}: registered {(registered.Count == 0 ? "none" : string.Join(", ", registered))}{shortfall}", data);
    }

    /// <summary>
    /// Registers one service and waits for the first acknowledgement. The receiver sends the REGISTER
    /// once the registry connection is up (a registry that starts later is found) and again whenever
    /// the connection is made again, so nothing here sends it twice.
    /// </summary>
    private static async Task RegisterAsync(ZlinkReceiver receiver, ServiceTrack track, CancellationToken stop)
    {
        NetZlinkReceiverRegistration service = track.Service;
        try
        {
            await receiver.RegisterAsync(service.Name!, service.AdvertiseEndpoint, service.Weight, stop).ConfigureAwait(false);
            track.Acknowledged();
        }
        catch (ServiceRegistrationException e) when (!stop.IsCancellationRequested)
        {
            track.Refuse(e.Message);
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or ServiceRegistrationException)
        {
            // The host is stopping (the cancelled registration is withdrawn), or the receiver is gone.
        }
        catch (InvalidOperationException e)
        {
            // The receiver cannot register at all (its worker failed).
            track.Refuse(e.Message);
        }
    }

    /// <summary>Reads the receiver's registration changes for their reasons: why a registration was
    /// lost, and a registration the registry refused when it was sent again.</summary>
    private static async Task WatchAsync(System.Threading.Channels.ChannelReader<RegistrationChange> changes, ServiceTrack[] tracks, CancellationToken stop)
    {
        try
        {
            await foreach (RegistrationChange change in changes.ReadAllAsync(stop).ConfigureAwait(false))
            {
                foreach (ServiceTrack track in tracks)
                {
                    if (string.Equals(track.Service.Name, change.Service, StringComparison.Ordinal))
                    {
                        track.Changed(change);
                    }
                }
            }
        }
        catch (OperationCanceledException)
        {
            // The host is stopping.
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

    private enum Standing
    {
        Pending,
        Registered,
        Reconnecting,
        Refused,
    }

    /// <summary>What the hosted service knows of one configured service's registration beyond the
    /// receiver's state: whether it was acknowledged, since which check it is lost, and the reasons.</summary>
    private sealed class ServiceTrack(NetZlinkReceiverRegistration service)
    {
        private readonly Lock _lock = new();
        private bool _acknowledged;
        private string? _refused;
        private DateTimeOffset? _lostAt;
        private string? _lostReason;

        public NetZlinkReceiverRegistration Service => service;

        public void Acknowledged()
        {
            lock (_lock)
            {
                _acknowledged = true;
            }
        }

        public void Refuse(string reason)
        {
            lock (_lock)
            {
                _refused = reason;
            }
        }

        public void Changed(RegistrationChange change)
        {
            lock (_lock)
            {
                switch (change.Kind)
                {
                    case RegistrationChangeKind.Lost:
                        _lostReason = change.Reason;
                        break;
                    case RegistrationChangeKind.Registered or RegistrationChangeKind.Reregistered:
                        _acknowledged = true;
                        break;
                    case RegistrationChangeKind.Unregistered:
                        // While the host runs: the registry refused it when it was sent again (or
                        // the application withdrew it). The host's own UNREGISTERs come when it
                        // stops, after this is read no more.
                        _refused = change.Reason;
                        break;
                }
            }
        }

        /// <summary>The standing, from the receiver's <paramref name="state"/> now, with its detail and when a loss began.</summary>
        public (Standing Standing, string Detail, DateTimeOffset? LostAt) Read(RegistrationState state, DateTimeOffset now)
        {
            lock (_lock)
            {
                if (_refused is not null)
                {
                    return (Standing.Refused, _refused, null);
                }

                switch (state)
                {
                    case RegistrationState.Registered:
                        _lostAt = null;
                        return (Standing.Registered, "registered", null);
                    case RegistrationState.Reconnecting when _acknowledged:
                        // A loss counts from the first check that sees it (the receiver's state is
                        // the one source of when, so no reading of the changes can lag behind it).
                        _lostAt ??= now;
                        return (Standing.Reconnecting, _lostReason ?? "the registry connection dropped", _lostAt);
                    case RegistrationState.Reconnecting:
                        return (Standing.Pending, "the registry connection dropped before the registry answered; sent again when it is back", null);
                    case RegistrationState.NotRegistered when _acknowledged:
                        // Dropped by the registry; its change (with the reason) is not read yet.
                        return (Standing.Refused, "the registry refused the registration when it was sent again", null);
                    default:
                        return (Standing.Pending, "no answer from the registry yet", null);
                }
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
