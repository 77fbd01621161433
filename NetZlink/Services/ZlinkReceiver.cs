using System.Buffers.Binary;
using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>Settings of a <see cref="ZlinkReceiver"/>; the defaults are zlink 1.3's.</summary>
public sealed class ReceiverOptions
{
    /// <summary>The routing id of the receiver's ROUTER (and of its registry connection); null: 5
    /// random bytes, the first 0, as zlink makes them.</summary>
    public byte[]? RoutingId { get; set; }

    /// <summary>How often each registration is renewed with a HEARTBEAT (5 s).</summary>
    public TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>The PEM certificate (chain) file the ROUTER presents to gateways over <c>tls://</c>
    /// or <c>wss://</c> (zlink_receiver_set_tls_server's <c>cert</c>); set with
    /// <see cref="TlsKeyFile"/> before <see cref="ZlinkReceiver.Bind"/>. Null: no TLS.</summary>
    public string? TlsCertificateFile { get; set; }

    /// <summary>The PEM private key file of <see cref="TlsCertificateFile"/> (zlink_receiver_set_tls_server's <c>key</c>).</summary>
    public string? TlsKeyFile { get; set; }
}

/// <summary>
/// zlink's gateway receiver, managed: a ROUTER that gateways send requests to, registered under a
/// service name with a registry (REGISTER, then a HEARTBEAT every interval). Requests are read with
/// <see cref="ReceiveAsync"/> (or <see cref="Requests"/>); each carries the gateway's routing id to
/// answer with <see cref="Send(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>. Every member is safe
/// from any thread.
/// </summary>
public sealed class ZlinkReceiver : IAsyncDisposable, IDisposable
{
    private readonly Worker _worker;

    /// <summary>Creates a receiver.</summary>
    /// <param name="context">The context its sockets belong to.</param>
    /// <param name="options">Routing id and heartbeat interval.</param>
    public ZlinkReceiver(ZlinkContext context, ReceiverOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        options ??= new ReceiverOptions();
        ZlinkRegistry.Positive(options.HeartbeatInterval, nameof(options.HeartbeatInterval));
        if (options.RoutingId is { } rid && (rid.Length == 0 || rid.Length > ServiceProtocol.MaxRoutingIdLength))
        {
            throw new ArgumentException($"a routing id has 1 to {ServiceProtocol.MaxRoutingIdLength} bytes, not {rid.Length}", nameof(options));
        }

        ServiceTls.CheckServer(options.TlsCertificateFile, options.TlsKeyFile, nameof(options));
        _worker = new Worker(context, options, options.RoutingId is { } id ? (byte[])id.Clone() : Worker.NewRoutingId());
    }

    /// <summary>The routing id of the receiver's ROUTER: what registries list and gateways address.</summary>
    public RoutingId RoutingId => new(_worker.RoutingIdBytes);

    /// <summary>The last endpoint bound (with the port a <c>*</c> took).</summary>
    public string? BoundEndpoint => _worker.Bound;

    /// <summary>Requests as a stream (the same queue <see cref="ReceiveAsync"/> reads). Dispose each.</summary>
    public ChannelReader<ServiceMessage> Requests => _worker.Router.Incoming;

    /// <summary>Registry answers refused as not following the protocol.</summary>
    public long RefusedMessages => _worker.RefusedMessages;

    /// <summary>Why the last refused message was refused.</summary>
    public string? LastRefusal => _worker.LastRefusal;

    /// <summary>Every change of this receiver's registrations (registered, lost with the registry
    /// connection, registered again, unregistered), each with its reason, from the first time this
    /// property is read (nothing is kept before); unbounded, one small entry per change.</summary>
    public ChannelReader<RegistrationChange> RegistrationChanges => _worker.Changes;

    /// <summary>Where the registration of <paramref name="service"/> stands now.</summary>
    /// <param name="service">The service name.</param>
    public RegistrationState GetRegistrationState(string service)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        return _worker.StateOf(service);
    }

    /// <summary>Binds the ROUTER gateways connect to (zlink_receiver_bind).</summary>
    /// <param name="endpoint">For example <c>tcp://127.0.0.1:*</c>.</param>
    public void Bind(string endpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(endpoint);
        _worker.Bind(endpoint);
    }

    /// <summary>Connects to a registry's ROUTER endpoint (zlink_receiver_connect_registry);
    /// registrations go there.</summary>
    /// <param name="registryRouterEndpoint">The registry's <see cref="ZlinkRegistry.RouterEndpoint"/>.</param>
    public Task ConnectRegistryAsync(string registryRouterEndpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(registryRouterEndpoint);
        return _worker.ConnectRegistryAsync(registryRouterEndpoint);
    }

    /// <summary>Registers this receiver under <paramref name="service"/> and waits for the
    /// registry's REGISTER_ACK; heartbeats then keep it registered, and it is registered again
    /// whenever the registry connection is made again (a registry that restarted).</summary>
    /// <param name="service">The service name (1 to 255 bytes of UTF-8).</param>
    /// <param name="advertiseEndpoint">The endpoint gateways should connect to; null: the bound
    /// endpoint, with <c>*</c> or <c>0.0.0.0</c> as host made <c>127.0.0.1</c> (zlink's rule).</param>
    /// <param name="weight">Its weight for weighted load balancing (0 counts as 1).</param>
    /// <param name="cancellationToken">Ends the wait and withdraws the registration: nothing is
    /// listed later (an UNREGISTER follows a REGISTER that already went out).</param>
    /// <exception cref="ServiceRegistrationException">The registry refused.</exception>
    public Task RegisterAsync(string service, string? advertiseEndpoint = null, uint weight = 1, CancellationToken cancellationToken = default)
    {
        CheckText(service, nameof(service));
        if (advertiseEndpoint is not null)
        {
            CheckText(advertiseEndpoint, nameof(advertiseEndpoint));
        }

        return _worker.RegisterAsync(service, advertiseEndpoint, weight == 0 ? 1 : weight, cancellationToken);
    }

    /// <summary>Changes the weight of a registration (UPDATE_WEIGHT) and waits for the answer.</summary>
    /// <param name="service">A service registered before.</param>
    /// <param name="weight">The new weight (0 counts as 1).</param>
    /// <param name="cancellationToken">Ends the wait.</param>
    public Task UpdateWeightAsync(string service, uint weight, CancellationToken cancellationToken = default)
    {
        CheckText(service, nameof(service));
        return _worker.UpdateWeightAsync(service, weight == 0 ? 1 : weight, cancellationToken);
    }

    /// <summary>Removes a registration (UNREGISTER; the registry does not answer) and stops its
    /// heartbeats. With the registry connection down, the UNREGISTER goes when it is back.</summary>
    /// <param name="service">A service registered before.</param>
    public Task UnregisterAsync(string service)
    {
        CheckText(service, nameof(service));
        return _worker.UnregisterAsync(service);
    }

    /// <summary>Receives the next request. Dispose the message when done.</summary>
    /// <param name="cancellationToken">Ends the wait.</param>
    public ValueTask<ServiceMessage> ReceiveAsync(CancellationToken cancellationToken = default) =>
        _worker.Router.ReceiveAsync(cancellationToken);

    /// <summary>
    /// Receives the next request on the caller's thread, blocking it up to <paramref name="timeout"/>:
    /// for a caller with a thread of its own (a loop that does nothing else), where
    /// <see cref="ReceiveAsync"/> would resume on the thread pool after every wait. The thread that
    /// fills the queue wakes this caller directly. Safe from any number of threads at once, mixed
    /// with <see cref="ReceiveAsync"/> and <see cref="Requests"/>: each message goes to one reader.
    /// </summary>
    /// <param name="timeout">How long to wait: <see cref="TimeSpan.Zero"/> only looks,
    /// <see cref="Timeout.InfiniteTimeSpan"/> waits without a limit.</param>
    /// <param name="message">The request (dispose it when done); null when false is returned.</param>
    /// <returns>False when <paramref name="timeout"/> passed with nothing received.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than
    /// <see cref="Timeout.InfiniteTimeSpan"/>) or above <see cref="int.MaxValue"/> milliseconds.</exception>
    /// <exception cref="System.Threading.Channels.ChannelClosedException">The receiver was disposed and nothing is left to read (as <see cref="ReceiveAsync"/>).</exception>
    public bool TryReceive(TimeSpan timeout, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out ServiceMessage? message) =>
        _worker.Router.TryReceive(timeout, out message);

    /// <summary>Answers (or sends to) a gateway: [gateway id][payload].</summary>
    /// <param name="gateway">The gateway's routing id (<see cref="ServiceMessage.Peer"/> of its request).</param>
    /// <param name="payload">The one part.</param>
    /// <returns>False when that gateway is not connected.</returns>
    public bool Send(ReadOnlySpan<byte> gateway, ReadOnlySpan<byte> payload)
    {
        if (gateway.IsEmpty)
        {
            throw new ArgumentException("the gateway's routing id is empty", nameof(gateway));
        }

        return _worker.Send(gateway, payload);
    }

    /// <summary>Answers (or sends to) a gateway: [gateway id][parts…].</summary>
    /// <param name="gateway">The gateway's routing id.</param>
    /// <param name="parts">The parts (at least one).</param>
    /// <returns>False when that gateway is not connected.</returns>
    public bool Send(ReadOnlySpan<byte> gateway, ReadOnlySpan<ReadOnlyMemory<byte>> parts)
    {
        if (gateway.IsEmpty)
        {
            throw new ArgumentException("the gateway's routing id is empty", nameof(gateway));
        }

        if (parts.IsEmpty)
        {
            throw new ArgumentException("a message has at least one part", nameof(parts));
        }

        return _worker.Send(gateway, parts);
    }

    /// <summary>Stops heartbeats, closes the sockets. Registrations are not withdrawn: the registry
    /// expires them (unregister first for an orderly leave).</summary>
    public void Dispose() => _worker.Dispose();

    /// <summary>As <see cref="Dispose"/>, without blocking the caller.</summary>
    public ValueTask DisposeAsync() => _worker.DisposeAsync();

    internal static void CheckText(string value, string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(value, name);
        if (value.Contains('\0', StringComparison.Ordinal))
        {
            throw new ArgumentException("holds a NUL character", name);
        }

        int bytes;
        try
        {
            bytes = new System.Text.UTF8Encoding(false, true).GetByteCount(value);
        }
        catch (System.Text.EncoderFallbackException e)
        {
            throw new ArgumentException("is not valid UTF-16 text (an unpaired surrogate)", name, e);
        }

        if (bytes > ServiceProtocol.MaxTextLength)
        {
            throw new ArgumentException($"has {bytes} bytes of UTF-8, more than {ServiceProtocol.MaxTextLength}", name);
        }
    }

    private sealed class Worker : RegisteringWorker
    {
        private volatile string? _bound;
        private long _drainedAt;
        private bool _standingBack; // the poll set leaves the ROUTER to a direct reader (worker thread only)

        public Worker(ZlinkContext context, ReceiverOptions options, byte[] routingId)
            : base(context, "zlink receiver", ServiceType.Gateway, options.HeartbeatInterval, routingId)
        {
            Router = new SharedRouter(context, static _ => "");
            Router.WorkerNeeded = PollSetChangedSoon;
            try
            {
                Router.Socket.SetOption(SocketOption.RoutingId, RoutingIdBytes);
            }
            catch (SocketOptionException) when (options.RoutingId is null)
            {
                // A library that refuses ids starting with 0 (libzmq's rule) gets one starting with 1.
                RoutingIdBytes[0] = 1;
                Router.Socket.SetOption(SocketOption.RoutingId, RoutingIdBytes);
            }

            // zlink_receiver_set_tls_server: the ROUTER gateways connect to serves TLS.
            ServiceTls.ApplyServer(Router.Socket, options.TlsCertificateFile, options.TlsKeyFile);

            StartThread();
        }

        public SharedRouter Router { get; }

        protected override string? BoundEndpoint => _bound;

        public string? Bound => _bound;

        internal static byte[] NewRoutingId()
        {
            var id = new byte[5];
            uint r = (uint)Random.Shared.NextInt64(1, uint.MaxValue);
            BinaryPrimitives.WriteUInt32BigEndian(id.AsSpan(1), r);
            return id;
        }

        public void Bind(string endpoint)
        {
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                Router.Socket.Bind(endpoint);
                _bound = Router.Socket.LastEndpoint;
            }
        }

        public bool Send(ReadOnlySpan<byte> gateway, ReadOnlySpan<byte> payload)
        {
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                return Router.TrySendLocked(gateway, payload, 1000);
            }
        }

        public bool Send(ReadOnlySpan<byte> gateway, ReadOnlySpan<ReadOnlyMemory<byte>> parts)
        {
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                return Router.TrySendLocked(gateway, parts, 1000);
            }
        }

        // While a reader waits on the ROUTER's descriptor itself (TryReceive), the worker leaves it
        // to that reader (polls it for nothing) and only drains on its ticks.
        protected override void AddOwnPollItems(ZlinkPoller poller)
        {
            _standingBack = Router.WorkerStandsBack;
            poller.Add(Router.FileDescriptor, _standingBack ? PollEvents.None : PollEvents.PollIn); // 1
        }

        protected override void OnOwnPolled(ZlinkPoller poller)
        {
            if ((poller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
            {
                if (Router.WorkerStandsBack)
                {
                    PollSetChanged();
                }
                else
                {
                    DrainRouter(NowMs);
                }
            }
        }

        private void DrainRouter(long nowMs)
        {
            _drainedAt = nowMs;
            lock (Router.Gate)
            {
                Router.DrainLocked();
            }
        }

        // The descriptor is edge-like: look again after commands ran (they used the socket) and
        // every tick, so nothing waits on a lost edge; not again right after a drain.
        protected override void OnOwnTick(long nowMs)
        {
            if (_standingBack && !Router.WorkerStandsBack)
            {
                PollSetChanged();
            }

            // A direct reader busy reading drains before it sleeps: no lost edge can strand anything.
            if (CommandsRan || (nowMs - _drainedAt >= TickMilliseconds / 2 && !Router.DirectReaderBusy))
            {
                DrainRouter(nowMs);
            }
        }

        protected override void OnOwnStopped() => Router.Complete();

        protected override void OnDisposing() => Router.Complete();

        protected override void DisposeShared() => Router.Dispose();
    }
}
