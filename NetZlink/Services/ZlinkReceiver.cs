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

        _worker = new Worker(context, options);
    }

    /// <summary>The routing id of the receiver's ROUTER: what registries list and gateways address.</summary>
    public RoutingId RoutingId => new(_worker.RoutingIdBytes);

    /// <summary>The last endpoint bound (with the port a <c>*</c> took).</summary>
    public string? BoundEndpoint => _worker.BoundEndpoint;

    /// <summary>Requests as a stream (the same queue <see cref="ReceiveAsync"/> reads). Dispose each.</summary>
    public ChannelReader<ServiceMessage> Requests => _worker.Router.Incoming;

    /// <summary>Registry answers refused as not following the protocol.</summary>
    public long RefusedMessages => _worker.RefusedMessages;

    /// <summary>Why the last refused message was refused.</summary>
    public string? LastRefusal => _worker.LastRefusal;

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
    /// registry's REGISTER_ACK; heartbeats then keep it registered.</summary>
    /// <param name="service">The service name (1 to 255 bytes of UTF-8).</param>
    /// <param name="advertiseEndpoint">The endpoint gateways should connect to; null: the bound
    /// endpoint, with <c>*</c> or <c>0.0.0.0</c> as host made <c>127.0.0.1</c> (zlink's rule).</param>
    /// <param name="weight">Its weight for weighted load balancing (0 counts as 1).</param>
    /// <param name="cancellationToken">Ends the wait (the REGISTER may still reach the registry).</param>
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

    /// <summary>Removes a registration (UNREGISTER; the registry does not answer) and stops its heartbeats.</summary>
    /// <param name="service">A service registered before.</param>
    public Task UnregisterAsync(string service)
    {
        CheckText(service, nameof(service));
        return _worker.UnregisterAsync(service);
    }

    /// <summary>Receives the next request. Dispose the message when done.</summary>
    /// <param name="cancellationToken">Ends the wait.</param>
    public ValueTask<ServiceMessage> ReceiveAsync(CancellationToken cancellationToken = default) =>
        _worker.Router.Incoming.ReadAsync(cancellationToken);

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

    private sealed class Registration
    {
        public required string Endpoint;
        public uint Weight;
    }

    private sealed class Worker : ServiceWorker
    {
        private readonly long _heartbeatMs;
        private readonly Dictionary<string, Registration> _registrations = new(StringComparer.Ordinal);
        private readonly Queue<(string What, TaskCompletionSource<RegisterAckMessage> Done)> _awaitingAck = new();
        private readonly List<byte[]> _frames = [];
        private ZlinkSocket? _dealer;
        private string? _registryEndpoint;
        private long _nextHeartbeat;
        private volatile string? _bound;

        public Worker(ZlinkContext context, ReceiverOptions options)
            : base(context, "zlink receiver")
        {
            _heartbeatMs = (long)options.HeartbeatInterval.TotalMilliseconds;
            Router = new SharedRouter(context, static _ => "");
            RoutingIdBytes = options.RoutingId is { } id ? (byte[])id.Clone() : NewRoutingId();
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

            StartThread();
        }

        public SharedRouter Router { get; }

        public byte[] RoutingIdBytes { get; }

        public string? BoundEndpoint => _bound;

        protected override int TickMilliseconds => (int)Math.Clamp(_heartbeatMs / 2, 5, 100);

        private static byte[] NewRoutingId()
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

        public Task<bool> ConnectRegistryAsync(string endpoint) => InvokeAsync(() =>
        {
            _dealer?.Dispose();
            _dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
            _dealer.SetOption(SocketOption.RoutingId, RoutingIdBytes);
            _dealer.Connect(endpoint);
            _registryEndpoint = endpoint;
            FailAwaiting(new ServiceRegistrationException($"the registry connection was replaced by one to {endpoint}"));
            PollSetChanged();
            return true;
        });

        private string Advertised(string? advertise)
        {
            if (!string.IsNullOrEmpty(advertise))
            {
                return advertise;
            }

            string bound = _bound ?? throw new InvalidOperationException("RegisterAsync without an advertised endpoint needs Bind first");
            const string tcp = "tcp://";
            if (bound.StartsWith(tcp, StringComparison.Ordinal))
            {
                int colon = bound.LastIndexOf(':');
                string host = bound[tcp.Length..colon];
                if (host is "*" or "0.0.0.0")
                {
                    return tcp + "127.0.0.1" + bound[colon..];
                }
            }

            return bound;
        }

        public async Task RegisterAsync(string service, string? advertise, uint weight, CancellationToken cancellationToken)
        {
            string endpoint = Advertised(advertise);
            ReceiverOptionsCheck(endpoint);
            Task<RegisterAckMessage> ack = await InvokeAsync(() =>
            {
                Task<RegisterAckMessage> t = SendExpectingAck($"REGISTER {service} at {endpoint}",
                    ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Register, ServiceType.Gateway, service, endpoint, weight));
                _registrations[service] = new Registration { Endpoint = endpoint, Weight = weight };
                _nextHeartbeat = NowMs + _heartbeatMs;
                return t;
            }).ConfigureAwait(false);
            RegisterAckMessage answer = await ack.WaitAsync(cancellationToken).ConfigureAwait(false);
            if (answer.Status != 0)
            {
                await InvokeAsync(() => _registrations.Remove(service)).ConfigureAwait(false);
                throw new ServiceRegistrationException(answer.Status, answer.Error, $"REGISTER {service} at {endpoint} refused");
            }
        }

        private static void ReceiverOptionsCheck(string endpoint) => CheckText(endpoint, "advertiseEndpoint");

        public async Task UpdateWeightAsync(string service, uint weight, CancellationToken cancellationToken)
        {
            Task<RegisterAckMessage> ack = await InvokeAsync(() =>
            {
                if (!_registrations.TryGetValue(service, out Registration? r))
                {
                    throw new InvalidOperationException($"service {service} is not registered by this receiver");
                }

                r.Weight = weight;
                return SendExpectingAck($"UPDATE_WEIGHT {service}",
                    ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.UpdateWeight, ServiceType.Gateway, service, r.Endpoint, weight));
            }).ConfigureAwait(false);
            RegisterAckMessage answer = await ack.WaitAsync(cancellationToken).ConfigureAwait(false);
            if (answer.Status != 0)
            {
                throw new ServiceRegistrationException(answer.Status, answer.Error, $"UPDATE_WEIGHT {service} refused");
            }
        }

        public Task<bool> UnregisterAsync(string service) => InvokeAsync(() =>
        {
            if (!_registrations.Remove(service, out Registration? r))
            {
                throw new InvalidOperationException($"service {service} is not registered by this receiver");
            }

            if (!TrySendMultipart(Dealer(), ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Unregister, ServiceType.Gateway, service, r.Endpoint, null)))
            {
                throw new InvalidOperationException($"UNREGISTER {service} not sent: the registry connection is full or not up");
            }

            return true;
        });

        private ZlinkSocket Dealer() => _dealer ?? throw new InvalidOperationException("connect to a registry first (ConnectRegistryAsync)");

        private Task<RegisterAckMessage> SendExpectingAck(string what, List<byte[]> frames)
        {
            var done = new TaskCompletionSource<RegisterAckMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
            if (!TrySendMultipart(Dealer(), frames))
            {
                throw new InvalidOperationException($"{what} not sent: the registry connection is full or not up");
            }

            _awaitingAck.Enqueue((what, done));
            return done.Task;
        }

        /// <summary>Sends a whole message without waiting: false when its first frame is refused
        /// (the library then takes the rest once it took the first).</summary>
        internal static bool TrySendMultipart(ZlinkSocket socket, List<byte[]> frames)
        {
            for (int i = 0; i < frames.Count; i++)
            {
                bool last = i + 1 == frames.Count;
                if (!socket.TrySend(frames[i], last ? SendFlags.None : SendFlags.SendMore))
                {
                    if (i == 0)
                    {
                        return false;
                    }

                    throw new InvalidOperationException($"frame {i} of a control message refused after its first was taken");
                }
            }

            return true;
        }

        private void FailAwaiting(Exception e)
        {
            while (_awaitingAck.TryDequeue(out var a))
            {
                a.Done.TrySetException(e);
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

        protected override void AddPollItems(ZlinkPoller poller)
        {
            poller.Add(Router.FileDescriptor, PollEvents.PollIn); // 1
            if (_dealer is not null)
            {
                poller.Add(_dealer, PollEvents.PollIn); // 2
            }
        }

        protected override void OnPolled(ZlinkPoller poller)
        {
            if ((poller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
            {
                DrainRouter();
            }

            if (_dealer is not null && poller.Count > 2 && (poller.GetReturnedEvents(2) & PollEvents.PollIn) != 0)
            {
                _frames.Clear();
                while (_dealer.TryReceiveMultipart(_frames))
                {
                    HandleAck();
                    _frames.Clear();
                }
            }
        }

        private void DrainRouter()
        {
            lock (Router.Gate)
            {
                if (!Router.Socket.IsDisposed)
                {
                    Router.DrainLocked();
                }
            }
        }

        private void HandleAck()
        {
            if (!TryDecode(ServiceProtocol.DecodeRegisterAck, _frames, out RegisterAckMessage ack))
            {
                return;
            }

            if (_awaitingAck.TryDequeue(out var waiting))
            {
                waiting.Done.TrySetResult(ack);
            }
            else
            {
                Refuse($"REGISTER_ACK (status {ack.Status}) that answers nothing sent");
            }
        }

        protected override void OnTick(long nowMs)
        {
            // The descriptor is edge-like: look again every tick so nothing waits on a lost edge.
            DrainRouter();
            if (_dealer is null || _registrations.Count == 0 || nowMs < _nextHeartbeat)
            {
                return;
            }

            foreach (var (service, r) in _registrations)
            {
                // A registry connection that cannot take it now misses one heartbeat, not the worker's time.
                if (!TrySendMultipart(_dealer, ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Heartbeat, ServiceType.Gateway, service, r.Endpoint, null)))
                {
                    Refuse($"HEARTBEAT {service} not sent: the registry connection is full or not up");
                }
            }

            _nextHeartbeat = nowMs + _heartbeatMs;
        }

        protected override void OnStopped()
        {
            FailAwaiting(new ObjectDisposedException(nameof(ZlinkReceiver)));
            _dealer?.Dispose();
            Router.Complete();
        }

        protected override void DisposeShared() => Router.Dispose();
    }
}
