// One hosted plain socket (AddNetZlinkSocket): a ZlinkSocket of the configured type on the
// application's shared ZlinkContext, made with its options set when first asked for (injecting it
// makes it when the host gathers its services); when the host starts it is watched
// (WatchConnections), then bound and connected; when the host stops, the watch ends and the socket
// closes with its Linger. The watch feeds the health check: which connect endpoints have a
// connection now, connections lost and handshakes failed since the previous check.
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// A <see cref="ZlinkSocket"/> that runs with the host (registered by <c>AddNetZlinkSocket</c>): made
/// with its configured options, bound and connected when the host starts, closed with its linger
/// when the host stops. A socket is used from one thread at a time (the binding's rule): the host
/// touches it only in <see cref="StartAsync"/> and <see cref="StopAsync"/>.
/// </summary>
public sealed class NetZlinkSocketService : IHostedService, IDisposable
{
    private readonly IServiceProvider _services;
    private readonly Lock _gate = new();
    private readonly Dictionary<string, int> _live = new(StringComparer.Ordinal);
    private NetZlinkSocketOptions? _options;
    private ZlinkSocket? _socket;
    private ZlinkConnectionWatcher? _watcher;
    private Task _watching = Task.CompletedTask;
    private string[] _bound = [];
    private long _startedAtTicks; // UTC ticks; 0 until started
    private long _lost, _seenLost, _failures, _seenFailures;
    private string? _lastFailure;
    private bool _stopped;

    internal NetZlinkSocketService(IServiceProvider services, string key)
    {
        _services = services;
        Key = key;
        Time = services.GetService<TimeProvider>() ?? TimeProvider.System;
    }

    /// <summary>The registration's key (also its options' name).</summary>
    public string Key { get; }

    /// <summary>The socket, made on first use from the validated options (it binds and connects when the host starts it).</summary>
    /// <exception cref="OptionsValidationException">The settings are invalid.</exception>
    /// <exception cref="ObjectDisposedException">The host has stopped the socket.</exception>
    public ZlinkSocket Socket
    {
        get
        {
            lock (_gate)
            {
                ObjectDisposedException.ThrowIf(_stopped, this);
                return _socket ??= Make(_services.GetRequiredService<ZlinkContext>(), Options);
            }
        }
    }

    /// <summary>The endpoints bound at the start, as the socket reports them (with the port a <c>*</c> took).</summary>
    public IReadOnlyList<string> BoundEndpoints => Volatile.Read(ref _bound);

    /// <summary>When the host started the socket; null before.</summary>
    public DateTimeOffset? StartedAt => Volatile.Read(ref _startedAtTicks) is long ticks and not 0 ? new DateTimeOffset(ticks, TimeSpan.Zero) : null;

    internal TimeProvider Time { get; }

    /// <summary>The connect endpoints with a connection now (what the check reads; the tests wait on it without taking the check's counts).</summary>
    internal string[] ConnectedEndpoints()
    {
        lock (_gate)
        {
            return [.. Options.Connect.Distinct(StringComparer.Ordinal).Where(e => _live.GetValueOrDefault(e) > 0)];
        }
    }

    internal NetZlinkSocketOptions Options => _options ??= _services.GetRequiredService<IOptionsMonitor<NetZlinkSocketOptions>>().Get(Key);

    /// <summary>Starts watching the socket's connections, then binds and connects every configured endpoint.</summary>
    public Task StartAsync(CancellationToken cancellationToken)
    {
        ZlinkSocket socket = Socket;
        NetZlinkSocketOptions options = Options;
        ZlinkConnectionWatcher watcher = socket.WatchConnections();
        lock (_gate)
        {
            _watcher = watcher;
        }

        _watching = Task.Run(() => WatchAsync(watcher), CancellationToken.None);
        var bound = new List<string>();
        foreach (string endpoint in options.Bind)
        {
            socket.Bind(endpoint);
            bound.Add(socket.LastEndpoint);
        }

        foreach (string endpoint in options.Connect)
        {
            socket.Connect(endpoint);
        }

        Volatile.Write(ref _bound, [.. bound]);
        Volatile.Write(ref _startedAtTicks, Time.GetUtcNow().UtcTicks);
        return Task.CompletedTask;
    }

    /// <summary>
    /// Ends the watch and closes the socket: messages not yet sent are kept for its
    /// <see cref="ZlinkSocket.Linger"/>, cut to what is left of the host's shutdown timeout (a
    /// <c>Linger</c> of -1 is that time left), and the context's disposal waits for them up to that.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_services.GetService<HostShutdown>() is { } shutdown)
        {
            lock (_gate)
            {
                if (_socket is { } socket)
                {
                    socket.Linger = shutdown.BoundLinger(socket.Linger);
                }
            }
        }

        Dispose();
        await _watching.ConfigureAwait(false);
    }

    /// <summary>Ends the watch and closes the socket.</summary>
    public void Dispose()
    {
        ZlinkSocket? socket;
        ZlinkConnectionWatcher? watcher;
        lock (_gate)
        {
            _stopped = true;
            (socket, watcher) = (_socket, _watcher);
            (_socket, _watcher) = (null, null);
        }

        watcher?.Dispose();
        socket?.Dispose();
    }

    /// <summary>The check's verdict (the rules are in docs/hosting.md).</summary>
    internal HealthCheckResult Evaluate()
    {
        NetZlinkSocketOptions options = Options;
        string prefix = $"NetZlink socket '{Key}' ({options.SocketType})";
        string[] connected, missing;
        int live;
        lock (_gate)
        {
            if (_stopped)
            {
                return HealthCheckResult.Unhealthy($"{prefix} has stopped");
            }

            if (StartedAt is null || _watcher is null)
            {
                return HealthCheckResult.Unhealthy($"{prefix} has not been started");
            }

            connected = [.. options.Connect.Distinct(StringComparer.Ordinal).Where(e => _live.GetValueOrDefault(e) > 0)];
            missing = [.. options.Connect.Distinct(StringComparer.Ordinal).Where(e => _live.GetValueOrDefault(e) <= 0)];
            live = _live.Values.Sum();
        }

        bool inGrace = Time.GetUtcNow() - StartedAt.Value < options.Health.StartupGracePeriod;
        long lost = Interlocked.Read(ref _lost), failures = Interlocked.Read(ref _failures);
        long newLost = lost - Interlocked.Exchange(ref _seenLost, lost);
        long newFailures = failures - Interlocked.Exchange(ref _seenFailures, failures);
        var data = new Dictionary<string, object>
        {
            ["live_connections"] = live,
            ["connected_endpoints"] = connected.Length,
            ["connect_endpoints"] = connected.Length + missing.Length,
            ["lost_connections"] = lost,
            ["handshake_failures"] = failures,
            ["bound"] = string.Join(" ", BoundEndpoints),
        };
        if (!inGrace && connected.Length == 0 && missing.Length > 0)
        {
            return HealthCheckResult.Unhealthy($"{prefix}: no connected peer after the startup grace period (not connected: {string.Join(", ", missing)})", data: data);
        }

        var problems = new List<string>();
        if (!inGrace && missing.Length > 0)
        {
            problems.Add($"not connected: {string.Join(", ", missing)}");
        }

        if (newLost > 0)
        {
            problems.Add($"{newLost} connections to connect endpoints lost since the previous check");
        }

        if (newFailures > 0)
        {
            problems.Add($"{newFailures} handshakes failed since the previous check (last: {Volatile.Read(ref _lastFailure)})");
        }

        if (problems.Count > 0)
        {
            return HealthCheckResult.Degraded($"{prefix}: {string.Join("; ", problems)}", data: data);
        }

        var parts = new List<string>();
        if (BoundEndpoints.Count > 0)
        {
            parts.Add($"bound {string.Join(", ", BoundEndpoints)}");
        }

        if (connected.Length + missing.Length > 0)
        {
            parts.Add($"{connected.Length} of {connected.Length + missing.Length} connect endpoints connected");
        }

        parts.Add($"{live} live connections");
        string shortfall = missing.Length > 0 ? " (starting: within the startup grace period)" : string.Empty;
        return HealthCheckResult.Healthy($"{prefix}: {string.Join(", ", parts)}{shortfall}", data);
    }

    private static ZlinkSocket Make(ZlinkContext context, NetZlinkSocketOptions o)
    {
        ZlinkSocket socket = context.CreateSocket(o.SocketType ?? throw new InvalidOperationException($"the socket type '{o.Type}' is none (the check at start refuses it)"));
        try
        {
            if (o.Linger is int linger)
            {
                socket.Linger = linger;
            }

            if (o.SendHighWaterMark is int sndhwm)
            {
                socket.SendHighWaterMark = sndhwm;
            }

            if (o.ReceiveHighWaterMark is int rcvhwm)
            {
                socket.ReceiveHighWaterMark = rcvhwm;
            }

            if (o.RoutingId is { } rid)
            {
                socket.RoutingId = new RoutingId(rid);
            }

            if (o.ReconnectInterval is int ivl)
            {
                socket.ReconnectInterval = ivl;
            }

            if (o.ReconnectIntervalMax is int ivlMax)
            {
                socket.ReconnectIntervalMax = ivlMax;
            }

            if (o.HeartbeatInterval is int hb)
            {
                socket.HeartbeatInterval = hb;
            }

            if (o.HeartbeatTtl is int ttl)
            {
                socket.HeartbeatTtl = ttl;
            }

            if (o.HeartbeatTimeout is int hbTimeout)
            {
                socket.HeartbeatTimeout = hbTimeout;
            }

            if (o.Tls is { } tls)
            {
                ApplyTls(socket, tls);
            }

            foreach (string prefix in o.Subscribe)
            {
                if (o.SocketType == ZlinkSocketType.XSub)
                {
                    // An XSUB subscribes by sending a subscription message (1, then the prefix): it
                    // keeps it and sends it to every publisher it connects to later.
                    socket.Send(SubscriptionMessage(prefix));
                }
                else
                {
                    socket.Subscribe(prefix);
                }
            }

            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>An XSUB's subscription message: the byte 1, then the prefix's UTF-8 bytes.</summary>
    internal static byte[] SubscriptionMessage(string prefix)
    {
        var utf8 = new UTF8Encoding(false, true); // an unpaired surrogate throws, as SUB's Subscribe refuses it
        byte[] message = new byte[1 + utf8.GetByteCount(prefix)];
        message[0] = 1;
        utf8.GetBytes(prefix, message.AsSpan(1));
        return message;
    }

    private static void ApplyTls(ZlinkSocket socket, EngineTlsOptions tls)
    {
        foreach ((SocketOption option, string? value) in new[]
        {
            (SocketOption.TlsCert, tls.CertificateFile), (SocketOption.TlsKey, tls.KeyFile), (SocketOption.TlsPassword, tls.KeyPassword),
            (SocketOption.TlsCa, tls.CaFile), (SocketOption.TlsHostname, tls.Hostname),
        })
        {
            if (value is not null)
            {
                socket.SetOption(option, value);
            }
        }

        socket.SetOption(SocketOption.TlsVerify, tls.Verify);
        socket.SetOption(SocketOption.TlsTrustSystem, tls.TrustSystem);
        socket.SetOption(SocketOption.TlsRequireClientCert, tls.RequireClientCertificate);
    }

    private async Task WatchAsync(ZlinkConnectionWatcher watcher)
    {
        HashSet<string> connects = [.. Options.Connect];
        await foreach (ConnectionStateChange change in watcher.ReadAllAsync().ConfigureAwait(false))
        {
            // Endpoint is read for these two only: on the watcher's own Closed change it throws
            // (the event behind it is empty; see the report of issue 25).
            if (change.State is not (ConnectionState.Connected or ConnectionState.Disconnected))
            {
                continue;
            }

            string endpoint = change.Endpoint;
            switch (change.State)
            {
                case ConnectionState.Connected:
                    lock (_gate)
                    {
                        _live[endpoint] = _live.GetValueOrDefault(endpoint) + 1;
                    }

                    break;
                case ConnectionState.Disconnected:
                    bool wasLive;
                    lock (_gate)
                    {
                        int now = _live.GetValueOrDefault(endpoint);
                        wasLive = now > 0;
                        if (now > 1)
                        {
                            _live[endpoint] = now - 1;
                        }
                        else
                        {
                            _live.Remove(endpoint);
                        }
                    }

                    if (change.HandshakeFailure is not null || !wasLive)
                    {
                        Volatile.Write(ref _lastFailure, $"{endpoint}: {change.HandshakeFailure ?? change.Reason.ToString()}");
                        Interlocked.Increment(ref _failures);
                    }
                    else if (connects.Contains(endpoint))
                    {
                        Interlocked.Increment(ref _lost);
                    }

                    break;
            }
        }
    }
}

/// <summary>The health check of one hosted socket (registered by <c>AddNetZlinkHealthChecks</c>).</summary>
internal sealed class NetZlinkSocketHealthCheck(NetZlinkSocketService service) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
        => Task.FromResult(service.Evaluate());
}
