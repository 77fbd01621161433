using System.Collections.Concurrent;
using System.Text;
using System.Runtime.CompilerServices;
using NetZlink.Interop;

namespace NetZlink.Services;

/// <summary>Settings of a <see cref="ZlinkSpotNode"/>; the defaults are zlink 1.3's.</summary>
public sealed class SpotNodeOptions
{
    /// <summary>How often a registration is renewed with a HEARTBEAT (5 s).</summary>
    public TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Messages a subscriber holds unread before it drops new ones (100,000, zlink's
    /// queue limit); each drop is counted in <see cref="ZlinkSpotSubscriber.Dropped"/>.</summary>
    public int SubscriberCapacity { get; set; } = 100_000;

    /// <summary>The PUB socket's send high-water mark (null: the library's, 1,000 messages per
    /// peer); a peer further behind loses messages, as PUB/SUB does.</summary>
    public int? PublishHighWaterMark { get; set; }

    /// <summary>The SUB socket's receive high-water mark (null: the library's).</summary>
    public int? SubscribeHighWaterMark { get; set; }

    /// <summary>The PEM certificate (chain) file the PUB socket presents to peers over <c>tls://</c>
    /// or <c>wss://</c> (zlink_spot_node_set_tls_server's <c>cert</c>), with <see cref="TlsKeyFile"/>.</summary>
    public string? TlsCertificateFile { get; set; }

    /// <summary>The PEM private key file of <see cref="TlsCertificateFile"/>.</summary>
    public string? TlsKeyFile { get; set; }

    /// <summary>The PEM file of the CAs peers' and registries' certificates are verified against
    /// (zlink_spot_node_set_tls_client's <c>ca_cert</c>; the SUB and the registry DEALER).</summary>
    public string? TlsCaFile { get; set; }

    /// <summary>The name checked against peers' certificates (zlink_spot_node_set_tls_client's <c>hostname</c>).</summary>
    public string? TlsHostname { get; set; }

    /// <summary>Also trust the system's CA store (zlink_spot_node_set_tls_client's <c>trust_system</c>).</summary>
    public bool TlsTrustSystem { get; set; }
}

/// <summary>
/// zlink's SPOT node, managed: one participant of a topic publish/subscribe mesh. Its PUB socket
/// (bound with <see cref="Bind"/>) carries what its publishers publish as <c>[topic][parts…]</c>; its
/// SUB socket connects to the other nodes' PUB endpoints, given with <see cref="ConnectPeerAsync"/>
/// or found through a <see cref="ZlinkDiscovery"/> of <see cref="ServiceType.Spot"/>
/// (<see cref="SetDiscoveryAsync"/>), with the subscriptions of its subscribers as filters. A node
/// registers with a registry as a SPOT service (<see cref="RegisterAsync"/>). A publish goes to the
/// node's own matching subscribers and out to the peers; what comes from a peer goes to the
/// subscribers only (never published again, so nothing loops). Every member is safe from any thread.
/// </summary>
public sealed class ZlinkSpotNode : IAsyncDisposable, IDisposable
{
    /// <summary>The service name zlink registers and discovers SPOT nodes under when none is given.</summary>
    public const string DefaultServiceName = "spot-node";

    /// <summary>The longest topic or pattern, in bytes of UTF-8 (zlink's limit).</summary>
    public const int MaxTopicLength = 255;

    private static readonly UTF8Encoding StrictUtf8 = new(false, true);
    private readonly Worker _worker;
    private readonly int _subscriberCapacity;

    /// <summary>Creates a node (its thread starts; nothing is bound or connected yet).</summary>
    /// <param name="context">The context its sockets belong to.</param>
    /// <param name="options">Heartbeats, queue limits, TLS.</param>
    public ZlinkSpotNode(ZlinkContext context, SpotNodeOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        options ??= new SpotNodeOptions();
        ZlinkRegistry.Positive(options.HeartbeatInterval, nameof(options.HeartbeatInterval));
        ArgumentOutOfRangeException.ThrowIfLessThan(options.SubscriberCapacity, 1, nameof(options.SubscriberCapacity));
        ServiceTls.CheckServer(options.TlsCertificateFile, options.TlsKeyFile, nameof(options));
        ServiceTls.CheckClient(options.TlsCaFile, options.TlsHostname, options.TlsTrustSystem, nameof(options));
        _subscriberCapacity = options.SubscriberCapacity;
        _worker = new Worker(context, options);
    }

    /// <summary>The routing id of the node's registry connection: what the registry lists for it,
    /// and how the node knows itself among the nodes discovery reports (4 random bytes, as zlink's).</summary>
    public RoutingId RoutingId => new(_worker.RoutingIdBytes);

    /// <summary>The last endpoint the PUB socket bound (with the port a <c>*</c> took).</summary>
    public string? BoundEndpoint => _worker.Bound;

    /// <summary>The peer PUB endpoints the SUB socket is connected to now (given and discovered).</summary>
    public IReadOnlyCollection<string> Peers => _worker.PeerSnapshot;

    /// <summary>Messages from peers refused (a topic without parts, an empty topic) and registry
    /// answers that did not follow the protocol.</summary>
    public long RefusedMessages => _worker.RefusedMessages;

    /// <summary>Why the last refused message was refused.</summary>
    public string? LastRefusal => _worker.LastRefusal;

    /// <summary>Binds the PUB socket peers connect to (zlink_spot_node_bind).</summary>
    /// <param name="endpoint">For example <c>tcp://127.0.0.1:*</c>.</param>
    public void Bind(string endpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(endpoint);
        _worker.Bind(endpoint);
    }

    /// <summary>Every change of this node's registrations (registered, lost with the registry
    /// connection, registered again, unregistered), each with its reason, from the first time this
    /// property is read.</summary>
    public System.Threading.Channels.ChannelReader<RegistrationChange> RegistrationChanges => _worker.Changes;

    /// <summary>Where the registration of <paramref name="service"/> stands now.</summary>
    /// <param name="service">The SPOT service name.</param>
    public RegistrationState GetRegistrationState(string service = DefaultServiceName)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        return _worker.StateOf(service);
    }

    /// <summary>Connects to a registry's ROUTER endpoint (zlink_spot_node_connect_registry).</summary>
    /// <param name="registryRouterEndpoint">The registry's <see cref="ZlinkRegistry.RouterEndpoint"/>.</param>
    public Task ConnectRegistryAsync(string registryRouterEndpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(registryRouterEndpoint);
        return _worker.ConnectRegistryAsync(registryRouterEndpoint);
    }

    /// <summary>Registers the node as a SPOT service (type 2) and waits for the registry's
    /// REGISTER_ACK; heartbeats keep it registered (zlink_spot_node_register).</summary>
    /// <param name="service">The service name: 1 to 64 of <c>a-z 0-9 . -</c> (zlink's rule).</param>
    /// <param name="advertiseEndpoint">The endpoint peers connect to; null: the bound endpoint,
    /// with <c>*</c> or <c>0.0.0.0</c> as host made <c>127.0.0.1</c>.</param>
    /// <param name="cancellationToken">Ends the wait and withdraws the registration.</param>
    /// <exception cref="ServiceRegistrationException">The registry refused.</exception>
    public Task RegisterAsync(string service = DefaultServiceName, string? advertiseEndpoint = null, CancellationToken cancellationToken = default)
    {
        CheckServiceName(service);
        if (advertiseEndpoint is not null)
        {
            ZlinkReceiver.CheckText(advertiseEndpoint, nameof(advertiseEndpoint));
        }

        return _worker.RegisterAsync(service, advertiseEndpoint, 1, cancellationToken);
    }

    /// <summary>Withdraws a registration (UNREGISTER) and stops its heartbeats (zlink_spot_node_unregister).</summary>
    /// <param name="service">A service registered before.</param>
    public Task UnregisterAsync(string service = DefaultServiceName)
    {
        CheckServiceName(service);
        return _worker.UnregisterAsync(service);
    }

    /// <summary>Connects the SUB socket to a peer's PUB endpoint (zlink_spot_node_connect_peer_pub).</summary>
    /// <param name="peerPubEndpoint">The peer's bound (advertised) endpoint.</param>
    public Task ConnectPeerAsync(string peerPubEndpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(peerPubEndpoint);
        return _worker.SetManualPeerAsync(peerPubEndpoint, connect: true);
    }

    /// <summary>Drops a connection made by <see cref="ConnectPeerAsync"/> (zlink_spot_node_disconnect_peer_pub).</summary>
    /// <param name="peerPubEndpoint">The endpoint as given.</param>
    public Task DisconnectPeerAsync(string peerPubEndpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(peerPubEndpoint);
        return _worker.SetManualPeerAsync(peerPubEndpoint, connect: false);
    }

    /// <summary>Follows the nodes a discovery lists under <paramref name="service"/>: connects to
    /// each one's endpoint as it appears and disconnects as it leaves, skipping this node itself
    /// (zlink_spot_node_set_discovery). The discovery stays the caller's to dispose, after the node.</summary>
    /// <param name="discovery">A discovery of <see cref="ServiceType.Spot"/>.</param>
    /// <param name="service">The service name the nodes register under.</param>
    public Task SetDiscoveryAsync(ZlinkDiscovery discovery, string service = DefaultServiceName)
    {
        ArgumentNullException.ThrowIfNull(discovery);
        if (discovery.Type != ServiceType.Spot)
        {
            throw new ArgumentException("a SPOT node needs a discovery of ServiceType.Spot", nameof(discovery));
        }

        CheckServiceName(service);
        return _worker.SetDiscoveryAsync(discovery, service);
    }

    /// <summary>A publisher on this node (zlink_spot_pub_new): safe from any thread.</summary>
    public ZlinkSpotPublisher CreatePublisher()
    {
        _worker.CheckUsable();
        return new ZlinkSpotPublisher(this);
    }

    /// <summary>A subscriber on this node (zlink_spot_sub_new); it receives nothing until it subscribes.</summary>
    /// <param name="capacity">Unread messages it holds before dropping new ones (null: <see cref="SpotNodeOptions.SubscriberCapacity"/>).</param>
    public ZlinkSpotSubscriber CreateSubscriber(int? capacity = null)
    {
        _worker.CheckUsable();
        int c = capacity ?? _subscriberCapacity;
        ArgumentOutOfRangeException.ThrowIfLessThan(c, 1, nameof(capacity));
        var subscriber = new ZlinkSpotSubscriber(this, c);
        _worker.AddSubscriber(subscriber);
        return subscriber;
    }

    /// <summary>Stops the node: closes its sockets and ends every subscriber's stream (registrations
    /// are not withdrawn: the registry expires them; unregister first for an orderly leave).</summary>
    public void Dispose() => _worker.Dispose();

    /// <summary>As <see cref="Dispose"/>, without blocking the caller.</summary>
    public ValueTask DisposeAsync() => _worker.DisposeAsync();

    internal Worker Core => _worker;

    /// <summary>zlink's service name rule for SPOT: 1 to 64 characters of a-z, 0-9, '.', '-'.</summary>
    internal static void CheckServiceName(string service)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        if (service.Length > 64)
        {
            throw new ArgumentException($"a SPOT service name has at most 64 characters, not {service.Length}", nameof(service));
        }

        foreach (char c in service)
        {
            if (c is not ((>= 'a' and <= 'z') or (>= '0' and <= '9') or '.' or '-'))
            {
                throw new ArgumentException($"a SPOT service name is made of a-z, 0-9, '.' and '-' (zlink's rule); '{c}' is not", nameof(service));
            }
        }
    }

    /// <summary>Encodes a topic into <paramref name="buffer"/> (at least <see cref="MaxTopicLength"/>
    /// bytes), refusing what zlink refuses: empty, longer than 255 bytes, a NUL; and text that is not
    /// UTF-16 (an unpaired surrogate).</summary>
    internal static int EncodeTopic(string topic, Span<byte> buffer, string paramName)
    {
        ArgumentNullException.ThrowIfNull(topic, paramName);
        if (topic.Length == 0)
        {
            throw new ArgumentException("a topic is not empty", paramName);
        }

        if (topic.Length > MaxTopicLength)
        {
            throw new ArgumentException($"a topic has at most {MaxTopicLength} bytes of UTF-8; this one has {topic.Length} characters, so at least {topic.Length} bytes", paramName);
        }

        int n;
        try
        {
            if (StrictUtf8.GetMaxByteCount(topic.Length) > buffer.Length && StrictUtf8.GetByteCount(topic) > buffer.Length)
            {
                throw new ArgumentException($"a topic has at most {MaxTopicLength} bytes of UTF-8; this one has {StrictUtf8.GetByteCount(topic)}", paramName);
            }

            n = StrictUtf8.GetBytes(topic, buffer);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException("a topic is valid UTF-16 text (this one holds an unpaired surrogate)", paramName, e);
        }

        if (n > MaxTopicLength)
        {
            throw new ArgumentException($"a topic has at most {MaxTopicLength} bytes of UTF-8; this one has {n}", paramName);
        }

        if (buffer[..n].Contains((byte)0))
        {
            throw new ArgumentException("a topic holds no NUL character", paramName);
        }

        return n;
    }

    internal sealed class Worker : RegisteringWorker
    {
        // Topic strings by their bytes: a topic seen again costs no allocation (bounded: past the
        // limit a topic is decoded each time).
        private const int TopicCacheLimit = 4096;
        private static readonly UTF8Encoding LenientUtf8 = new(false, false);
        private readonly ConcurrentDictionary<byte[], string> _topicCache = new(ByteKeyComparer.Instance);
        private readonly ConcurrentDictionary<byte[], string>.AlternateLookup<ReadOnlySpan<byte>> _topicLookup;
        private readonly Lock _pubGate = new();
        private readonly Lock _filterGate = new();
        private readonly ZlinkSocket _pub;
        private readonly ZlinkSocket _sub;
        private readonly ZlinkMessage _frame = new();
        private readonly Dictionary<byte[], int> _filters = new(ByteKeyComparer.Instance);
        private readonly HashSet<string> _manualPeers = new(StringComparer.Ordinal);
        private readonly HashSet<string> _discoveredPeers = new(StringComparer.Ordinal);
        private readonly HashSet<string> _connected = new(StringComparer.Ordinal);
        private ZlinkSpotSubscriber[] _subscribers = [];
        private ZlinkDiscovery? _discovery;
        private string _discoveryService = DefaultServiceName;
        private Action<string>? _observer;
        private volatile string? _bound;
        private volatile string[] _peerSnapshot = [];
        private volatile bool _closed;

        public Worker(ZlinkContext context, SpotNodeOptions options)
            : base(context, "zlink spot node", ServiceType.Spot, options.HeartbeatInterval, NewNodeId())
        {
            _topicLookup = _topicCache.GetAlternateLookup<ReadOnlySpan<byte>>();
            _pub = context.CreateSocket(ZlinkSocketType.Pub);
            _sub = context.CreateSocket(ZlinkSocketType.Sub);
            if (options.PublishHighWaterMark is { } sndhwm)
            {
                _pub.SendHighWaterMark = sndhwm;
            }

            if (options.SubscribeHighWaterMark is { } rcvhwm)
            {
                _sub.ReceiveHighWaterMark = rcvhwm;
            }

            // zlink_spot_node_set_tls_server on the PUB; set_tls_client on the SUB and registry DEALER.
            ServiceTls.ApplyServer(_pub, options.TlsCertificateFile, options.TlsKeyFile);
            ServiceTls.ApplyClient(_sub, options.TlsCaFile, options.TlsHostname, options.TlsTrustSystem);
            TlsCaFile = options.TlsCaFile;
            TlsHostname = options.TlsHostname;
            TlsTrustSystem = options.TlsTrustSystem;
            StartThread();
        }

        private string? TlsCaFile { get; }

        private string? TlsHostname { get; }

        private bool TlsTrustSystem { get; }

        public string? Bound => _bound;

        public IReadOnlyCollection<string> PeerSnapshot => _peerSnapshot;

        protected override string? BoundEndpoint => _bound;

        protected override void ConfigureDealer(ZlinkSocket dealer) => ServiceTls.ApplyClient(dealer, TlsCaFile, TlsHostname, TlsTrustSystem);

        /// <summary>4 random bytes, as zlink's node id; the first is not 0 (libzmq refuses such routing ids).</summary>
        private static byte[] NewNodeId()
        {
            var id = new byte[4];
            Random.Shared.NextBytes(id);
            id[0] = (byte)Math.Max((int)id[0], 1);
            return id;
        }

        public void CheckUsable()
        {
            ThrowIfFaulted();
            ObjectDisposedException.ThrowIf(_closed, typeof(ZlinkSpotNode));
        }

        public void Bind(string endpoint)
        {
            CheckUsable();
            lock (_pubGate)
            {
                _pub.Bind(endpoint);
                _bound = _pub.LastEndpoint;
            }
        }

        // ---- subscribers and filters -------------------------------------------------------

        public void AddSubscriber(ZlinkSpotSubscriber subscriber)
        {
            lock (_filterGate)
            {
                CheckUsable();
                _subscribers = [.. _subscribers, subscriber];
            }
        }

        public void RemoveSubscriber(ZlinkSpotSubscriber subscriber, IEnumerable<byte[]> filters)
        {
            lock (_filterGate)
            {
                _subscribers = [.. _subscribers.Where(s => s != subscriber)];
                foreach (byte[] f in filters)
                {
                    RemoveFilterLocked(f);
                }
            }
        }

        /// <summary>Counts a wire filter (the topic of an exact subscription, the prefix of a
        /// pattern) and subscribes the SUB socket to it the first time (as zlink, on its thread).</summary>
        public void AddFilter(byte[] filter)
        {
            lock (_filterGate)
            {
                CheckUsable();
                _filters.TryGetValue(filter, out int n);
                _filters[filter] = n + 1;
                if (n == 0)
                {
                    Post(() => _sub.SetOption(SocketOption.Subscribe, filter));
                }
            }
        }

        public void RemoveFilter(byte[] filter)
        {
            lock (_filterGate)
            {
                RemoveFilterLocked(filter);
            }
        }

        private void RemoveFilterLocked(byte[] filter)
        {
            if (!_filters.TryGetValue(filter, out int n))
            {
                return;
            }

            if (n > 1)
            {
                _filters[filter] = n - 1;
                return;
            }

            _filters.Remove(filter);
            if (!_closed && Fault is null)
            {
                try
                {
                    Post(() => _sub.SetOption(SocketOption.Unsubscribe, filter));
                }
                catch (ObjectDisposedException)
                {
                    // The node is closing: its SUB socket goes with every filter.
                }
            }
        }

        // ---- publishing --------------------------------------------------------------------

        [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message
        public void Publish(ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, ReadOnlySpan<ReadOnlyMemory<byte>> parts, bool multipart)
        {
            lock (_pubGate)
            {
                CheckUsable();
                // A PUB socket takes every message (it drops, per peer, past its high-water mark).
                _pub.TrySend(topic, SendFlags.SendMore);
                if (!multipart)
                {
                    _pub.TrySend(payload);
                }
                else
                {
                    for (int i = 0; i < parts.Length; i++)
                    {
                        _pub.TrySend(parts[i].Span, i + 1 < parts.Length ? SendFlags.SendMore : SendFlags.None);
                    }
                }
            }

            // The node's own subscribers get it here (a node's SUB does not hear its own PUB).
            ZlinkSpotSubscriber[] subscribers = Volatile.Read(ref _subscribers);
            int matches = 0;
            foreach (ZlinkSpotSubscriber s in subscribers)
            {
                if (s.Matches(topic))
                {
                    matches++;
                }
            }

            if (matches == 0)
            {
                return;
            }

            ServiceMessage m = ServiceMessage.Rent(TopicString(topic), topic);
            if (!multipart)
            {
                m.AddPart(payload);
            }
            else
            {
                foreach (ReadOnlyMemory<byte> p in parts)
                {
                    m.AddPart(p.Span);
                }
            }

            Deliver(subscribers, topic, m);
        }

        /// <summary>Hands <paramref name="m"/> to every subscriber that matches: copies to all but
        /// the last, the message itself to the last (or disposes it when none matches now).</summary>
        private static void Deliver(ZlinkSpotSubscriber[] subscribers, ReadOnlySpan<byte> topic, ServiceMessage m, bool signal = true)
        {
            ZlinkSpotSubscriber? last = null;
            foreach (ZlinkSpotSubscriber s in subscribers)
            {
                if (!s.Matches(topic))
                {
                    continue;
                }

                last?.Enqueue(m.Clone(), signal);
                last = s;
            }

            if (last is null)
            {
                m.Dispose();
            }
            else
            {
                last.Enqueue(m, signal);
            }
        }

        private string TopicString(ReadOnlySpan<byte> topic)
        {
            if (_topicLookup.TryGetValue(topic, out string? s))
            {
                return s;
            }

            s = LenientUtf8.GetString(topic);
            if (_topicCache.Count < TopicCacheLimit)
            {
                _topicLookup.TryAdd(topic, s);
            }

            return s;
        }

        // ---- peers -------------------------------------------------------------------------

        public Task<bool> SetManualPeerAsync(string endpoint, bool connect) => InvokeAsync(() =>
        {
            if (connect)
            {
                _manualPeers.Add(endpoint);
            }
            else if (!_manualPeers.Remove(endpoint))
            {
                throw new InvalidOperationException($"{endpoint} is not a peer given to ConnectPeerAsync");
            }

            SyncPeers();
            return true;
        });

        public Task<bool> SetDiscoveryAsync(ZlinkDiscovery discovery, string service) => InvokeAsync(() =>
        {
            if (_discovery is { } old && _observer is { } o)
            {
                old.RemoveObserver(o);
            }

            _discovery = discovery;
            _discoveryService = service;
            _observer = changed =>
            {
                if (changed == service && !IsStopping)
                {
                    try
                    {
                        Post(RefreshDiscovered);
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                }
            };
            discovery.AddObserver(_observer);
            RefreshDiscovered();
            return true;
        });

        private void RefreshDiscovered()
        {
            if (_discovery is null)
            {
                return;
            }

            _discoveredPeers.Clear();
            string? self = _bound is null ? null : RegisteringWorker.Reachable(_bound);
            foreach (ReceiverInfo node in _discovery.GetReceivers(_discoveryService))
            {
                // Not itself: zlink knows itself by the routing id the registry lists.
                if (node.RoutingId.Span.SequenceEqual(RoutingIdBytes) || node.Endpoint == self)
                {
                    continue;
                }

                _discoveredPeers.Add(node.Endpoint);
            }

            SyncPeers();
        }

        private void SyncPeers()
        {
            foreach (string gone in _connected.Where(e => !_manualPeers.Contains(e) && !_discoveredPeers.Contains(e)).ToList())
            {
                _connected.Remove(gone);
                try
                {
                    _sub.Disconnect(gone);
                }
                catch (EndpointException)
                {
                    // Already gone on the library's side: nothing left to drop.
                }
            }

            foreach (string e in _manualPeers.Concat(_discoveredPeers))
            {
                if (_connected.Add(e))
                {
                    _sub.Connect(e);
                }
            }

            _peerSnapshot = [.. _connected.Order(StringComparer.Ordinal)];
        }

        // ---- the worker's loop -------------------------------------------------------------

        protected override void AddOwnPollItems(ZlinkPoller poller) => poller.Add(_sub, PollEvents.PollIn); // 1

        protected override void OnOwnPolled(ZlinkPoller poller)
        {
            if ((poller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
            {
                DrainSub();
            }
        }

        protected override void OnOwnTick(long nowMs)
        {
        }

        /// <summary>Receives what peers published, up to a batch per poll so commands are not starved.
        /// One hold of the socket and of the frame for the batch (only this worker uses the SUB).</summary>
        [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message
        private unsafe void DrainSub()
        {
            using SocketLease sub = _sub.Hold("TryReceive");
            using HandleLease frame = _frame.Lease();
            var msg = (ZlinkMsg*)frame.Value;
            bool delivered = false;
            for (int n = 0; n < 4096 && ZlinkSocket.TryReceiveHeld(sub.Value, msg); n++)
            {
                ReadOnlySpan<byte> topic = FrameData(msg);
                if (Native.MsgMore(msg) == 0)
                {
                    Refuse($"a SPOT message of {topic.Length} bytes with no part after its topic (dropped, as zlink drops it)");
                    continue;
                }

                if (topic.IsEmpty)
                {
                    SkipRest(sub.Value, msg);
                    Refuse("a SPOT message with an empty topic (dropped, as zlink drops it)");
                    continue;
                }

                ServiceMessage m = ServiceMessage.Rent(TopicString(topic), topic);
                do
                {
                    if (!ZlinkSocket.TryReceiveHeld(sub.Value, msg))
                    {
                        m.Dispose();
                        throw new InvalidOperationException("the SUB gave the first frames of a message without the rest");
                    }

                    m.AddPart(FrameData(msg));
                }
                while (Native.MsgMore(msg) != 0);

                // A waiting reader is woken by the first message of the batch, then every SignalEvery
                // and at its end: not once per message (a futex wake each while it waits).
                ZlinkSpotSubscriber[] subscribers = Volatile.Read(ref _subscribers);
                Deliver(subscribers, m.Peer, m, signal: false);
                if (n % SignalEvery == 0)
                {
                    SignalAll(subscribers);
                }

                delivered = true;
            }

            if (delivered)
            {
                SignalAll(Volatile.Read(ref _subscribers));
            }
        }

        private const int SignalEvery = 64;

        private static void SignalAll(ZlinkSpotSubscriber[] subscribers)
        {
            foreach (ZlinkSpotSubscriber s in subscribers)
            {
                s.Signal();
            }
        }

        private static unsafe ReadOnlySpan<byte> FrameData(ZlinkMsg* msg) => new(Native.MsgData(msg), checked((int)Native.MsgSize(msg)));

        private static unsafe void SkipRest(nint sub, ZlinkMsg* msg)
        {
            while (Native.MsgMore(msg) != 0 && ZlinkSocket.TryReceiveHeld(sub, msg))
            {
            }
        }

        protected override void OnOwnStopped()
        {
            _closed = true;
            if (_discovery is { } d && _observer is { } o)
            {
                d.RemoveObserver(o);
            }

            _sub.Dispose();
            _frame.Dispose();
        }

        protected override void DisposeShared()
        {
            _closed = true;
            lock (_pubGate)
            {
                _pub.Dispose();
            }

            ZlinkSpotSubscriber[] subscribers;
            lock (_filterGate)
            {
                subscribers = _subscribers;
                _subscribers = [];
                _filters.Clear();
            }

            foreach (ZlinkSpotSubscriber s in subscribers)
            {
                s.Complete();
            }
        }
    }
}
