// One hosted gateway: a ZlinkDiscovery following the configured registries and the ZlinkGateway
// over it, on the application's shared ZlinkContext. Both are made from the validated options when
// first asked for (injecting them makes them when the host gathers its services); the discovery
// connects to the registries when the host starts; when the host stops the gateway is drained (bounded
// by what is left of the shutdown timeout), then both are disposed.
// The discovery runs on the service's TimeProvider, so the health check compares its registries'
// last-heard times (ZlinkDiscovery.Registries) with the same clock.
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// A <see cref="ZlinkDiscovery"/> and the <see cref="ZlinkGateway"/> over it that run with the host
/// (registered by <c>AddNetZlinkGateway</c> and its keyed form). It connects the discovery to the
/// registries when the host starts; when the host stops it drains the gateway, then disposes it and the discovery.
/// </summary>
public sealed partial class NetZlinkGatewayService : IHostedService, IAsyncDisposable, IDisposable
{
    private readonly IServiceProvider _services;
    private readonly string _optionsName;
    private readonly Lock _gate = new();
    private readonly ILogger _logger;
    private NetZlinkGatewayOptions? _options;
    private ZlinkDiscovery? _discovery;
    private ZlinkGateway? _gateway;
    private NetZlinkGatewayHealthState? _health;
    private long _startedAtTicks; // UTC ticks; 0 until started
    private int _stopped;

    internal NetZlinkGatewayService(IServiceProvider services, string? key, string optionsName)
    {
        _services = services;
        Key = key;
        _optionsName = optionsName;
        Time = services.GetService<TimeProvider>() ?? TimeProvider.System;
        _logger = services.GetService<ILoggerFactory>()?.CreateLogger("NetZlink.Extensions.Hosting") ?? NullLogger.Instance;
    }

    /// <summary>The registration's key; null for the gateway registered without one.</summary>
    public string? Key { get; }

    /// <summary>The name in the health check's descriptions: the key, else <c>gateway</c>.</summary>
    public string Name => Key ?? "gateway";

    /// <summary>The discovery, made on first use from the validated options (it connects to the registries when the host starts it).</summary>
    /// <exception cref="OptionsValidationException">The settings are invalid.</exception>
    /// <exception cref="ObjectDisposedException">The host has stopped the gateway.</exception>
    public ZlinkDiscovery Discovery
    {
        get
        {
            lock (_gate)
            {
                ObjectDisposedException.ThrowIf(_stopped != 0, this);
                return _discovery ??= new ZlinkDiscovery(Context, ServiceType.Gateway, Options.RegistryTimeout, Time);
            }
        }
    }

    /// <summary>The gateway, made on first use over <see cref="Discovery"/>; sends find receivers once the host has started it and the registries list them.</summary>
    /// <exception cref="OptionsValidationException">The settings are invalid.</exception>
    /// <exception cref="ObjectDisposedException">The host has stopped the gateway.</exception>
    public ZlinkGateway Gateway
    {
        get
        {
            lock (_gate)
            {
                if (_gateway is null)
                {
                    ZlinkDiscovery discovery = Discovery;
                    var gateway = new ZlinkGateway(Context, discovery, Options.Gateway);
                    foreach ((string service, LoadBalancing strategy) in Options.LoadBalancing)
                    {
                        gateway.SetLoadBalancing(service, strategy);
                    }

                    _gateway = gateway;
                }

                return _gateway;
            }
        }
    }

    /// <summary>When the host started the gateway; null before.</summary>
    public DateTimeOffset? StartedAt => Volatile.Read(ref _startedAtTicks) is long ticks and not 0 ? new DateTimeOffset(ticks, TimeSpan.Zero) : null;

    internal bool IsStopped => Volatile.Read(ref _stopped) != 0;

    internal TimeProvider Time { get; }

    internal NetZlinkGatewayOptions Options => _options ??= _services.GetRequiredService<IOptionsMonitor<NetZlinkGatewayOptions>>().Get(_optionsName);

    internal NetZlinkGatewayHealthState Health => LazyInitializer.EnsureInitialized(ref _health, () => new NetZlinkGatewayHealthState(this));

    private ZlinkContext Context => _services.GetRequiredService<ZlinkContext>();

    /// <summary>Makes the gateway (if not yet made) and connects its discovery to every registry.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        _ = Gateway; // and the discovery under it
        ZlinkDiscovery discovery = Discovery;
        foreach ((_, string endpoint) in Options.AllRegistryEndpoints())
        {
            await discovery.ConnectRegistryAsync(endpoint).WaitAsync(cancellationToken).ConfigureAwait(false);
        }

        Volatile.Write(ref _startedAtTicks, Time.GetUtcNow().UtcTicks);
    }

    /// <summary>
    /// Drains the gateway (<see cref="ZlinkGateway.DrainAsync"/>: it takes no more sends and waits
    /// until as many answers came back as it sent), for at most what is left of the host's shutdown
    /// timeout, logs what the drain found (event 1101), then disposes the gateway (its connections to
    /// the receivers end; answers not yet received are lost) and the discovery.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        ZlinkGateway? gateway;
        lock (_gate)
        {
            gateway = _stopped == 0 && StartedAt is not null ? _gateway : null;
        }

        if (gateway is not null)
        {
            TimeSpan left = _services.GetService<HostShutdown>()?.TimeLeft ?? Timeout.InfiniteTimeSpan;
            try
            {
                GatewayDrainResult result = await gateway.DrainAsync(left).WaitAsync(cancellationToken).ConfigureAwait(false);
                LastDrain = result;
                LogDrained(_logger, Name, result.Sent, result.Answered, result.Outstanding, result.Reason ?? "every answer came back");
            }
            catch (OperationCanceledException)
            {
                LogNotDrained(_logger, Name, "the host's shutdown timeout ended the drain");
            }
            catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException)
            {
                // The gateway faulted or was closed already: nothing to drain.
                LogNotDrained(_logger, Name, e.Message);
            }
        }

        await DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>What the drain at the host's stop found; null before it (or when it was cut).</summary>
    internal GatewayDrainResult? LastDrain { get; private set; }

    [LoggerMessage(EventId = 1101, EventName = "HostedGatewayDrained", Level = LogLevel.Information,
        Message = "Gateway {Gateway} drained at the host's stop: {Sent} sent, {Answered} answers, {Outstanding} outstanding ({Result})")]
    private static partial void LogDrained(ILogger logger, string gateway, long sent, long answered, long outstanding, string result);

    [LoggerMessage(EventId = 1102, EventName = "HostedGatewayNotDrained", Level = LogLevel.Information,
        Message = "Gateway {Gateway} was not drained at the host's stop: {Reason}")]
    private static partial void LogNotDrained(ILogger logger, string gateway, string reason);


    /// <summary>Disposes the gateway, then the discovery.</summary>
    public async ValueTask DisposeAsync()
    {
        (ZlinkGateway? gateway, ZlinkDiscovery? discovery) = Take();
        if (gateway is not null)
        {
            await gateway.DisposeAsync().ConfigureAwait(false);
        }

        if (discovery is not null)
        {
            await discovery.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Disposes the gateway, then the discovery, waiting for their threads.</summary>
    public void Dispose()
    {
        (ZlinkGateway? gateway, ZlinkDiscovery? discovery) = Take();
        gateway?.Dispose();
        discovery?.Dispose();
    }

    private (ZlinkGateway?, ZlinkDiscovery?) Take()
    {
        lock (_gate)
        {
            _stopped = 1;
            (ZlinkGateway?, ZlinkDiscovery?) taken = (_gateway, _discovery);
            _gateway = null;
            _discovery = null;
            return taken;
        }
    }
}
