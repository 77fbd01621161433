namespace NetZlink.Services;

/// <summary>Settings of a <see cref="ZlinkRegistry"/>; the defaults are zlink 1.3's.</summary>
public sealed class RegistryOptions
{
    /// <summary>Where the registry publishes SERVICE_LIST (an XPUB; discoveries and peer registries
    /// connect here). Required. <c>tcp://127.0.0.1:*</c> takes a free port
    /// (<see cref="ZlinkRegistry.PubEndpoint"/> tells which).</summary>
    public string PubEndpoint { get; set; } = "";

    /// <summary>Where receivers register (a ROUTER). Required.</summary>
    public string RouterEndpoint { get; set; } = "";

    /// <summary>The registry's id in a cluster (zlink_registry_set_id); null: a random non-zero one.</summary>
    public uint? RegistryId { get; set; }

    /// <summary>Publish endpoints of the other registries of the cluster (zlink_registry_add_peer).</summary>
    public IList<string> Peers { get; } = [];

    /// <summary>The heartbeat interval receivers are expected to keep (5 s). zlink stores it and
    /// does not use it; so does this registry.</summary>
    public TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>A receiver not heard of for longer than this is removed (15 s).</summary>
    public TimeSpan HeartbeatTimeout { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>SERVICE_LIST goes out at every change and at least this often (30 s). A peer
    /// registry not heard of for three of these is dropped with its receivers.</summary>
    public TimeSpan BroadcastInterval { get; set; } = TimeSpan.FromSeconds(30);
}

/// <summary>
/// zlink's service registry, managed: receivers register with it (ROUTER), it publishes the list of
/// services and their receivers (XPUB) to discoveries and to its peer registries, expires receivers
/// whose heartbeats stop, and merges the lists of its peers (a cluster). Speaks zlink 1.3's
/// protocol: zlink receivers, discoveries and registries work with it. Its sockets belong to one
/// thread of its own; every member is safe from any thread.
/// </summary>
public sealed class ZlinkRegistry : IAsyncDisposable, IDisposable
{
    private readonly Worker _worker;

    /// <summary>Creates the registry, binds its two endpoints and starts it.</summary>
    /// <param name="context">The context its sockets belong to.</param>
    /// <param name="options">Endpoints, id, peers and timings.</param>
    /// <exception cref="ArgumentException">An endpoint is missing, or a timing is not positive.</exception>
    /// <exception cref="EndpointException">An endpoint cannot be bound.</exception>
    public ZlinkRegistry(ZlinkContext context, RegistryOptions options)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(options);
        if (string.IsNullOrEmpty(options.PubEndpoint) || string.IsNullOrEmpty(options.RouterEndpoint))
        {
            throw new ArgumentException("a registry needs both PubEndpoint and RouterEndpoint", nameof(options));
        }

        Positive(options.HeartbeatInterval, nameof(options.HeartbeatInterval));
        Positive(options.HeartbeatTimeout, nameof(options.HeartbeatTimeout));
        Positive(options.BroadcastInterval, nameof(options.BroadcastInterval));
        _worker = new Worker(context, options);
    }

    /// <summary>The bound publish endpoint (with the port a <c>*</c> took).</summary>
    public string PubEndpoint => _worker.PubEndpoint;

    /// <summary>The bound registration endpoint.</summary>
    public string RouterEndpoint => _worker.RouterEndpoint;

    /// <summary>This registry's id (SERVICE_LIST's registry id).</summary>
    public uint RegistryId => _worker.RegistryId;

    /// <summary>Control messages refused as not following the protocol (each also answered with a
    /// REGISTER_ACK error when it was a REGISTER or UPDATE_WEIGHT).</summary>
    public long RefusedMessages => _worker.RefusedMessages;

    /// <summary>Why the last refused message was refused.</summary>
    public string? LastRefusal => _worker.LastRefusal;

    /// <summary>Joins another registry's cluster: subscribes to its publish endpoint.</summary>
    /// <param name="peerPubEndpoint">The peer's <see cref="PubEndpoint"/>.</param>
    public Task AddPeerAsync(string peerPubEndpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(peerPubEndpoint);
        return _worker.AddPeerAsync(peerPubEndpoint);
    }

    /// <summary>Every receiver this registry lists now (its own and its peers').</summary>
    public Task<IReadOnlyList<ReceiverInfo>> GetReceiversAsync(ServiceType type = ServiceType.Gateway) => _worker.SnapshotAsync(type);

    /// <summary>Stops the registry and closes its sockets.</summary>
    public void Dispose() => _worker.Dispose();

    /// <summary>Stops the registry and closes its sockets without blocking the caller.</summary>
    public ValueTask DisposeAsync() => _worker.DisposeAsync();

    internal static void Positive(TimeSpan value, string name)
    {
        if (value <= TimeSpan.Zero || value.TotalMilliseconds > uint.MaxValue)
        {
            throw new ArgumentOutOfRangeException(name, value, "must be positive and at most uint.MaxValue ms");
        }
    }

    private sealed class Provider
    {
        public required string Endpoint;
        public required byte[] RoutingId;
        public uint Weight;
        public long LastHeartbeat;
        public uint SourceRegistry;
    }

    private sealed class Worker : ServiceWorker
    {
        private readonly ZlinkSocket _pub;
        private readonly ZlinkSocket _router;
        private ZlinkSocket? _peerSub;
        private readonly HashSet<string> _peers = [];
        private readonly SortedDictionary<(ushort Type, string Name), SortedDictionary<string, Provider>> _services = [];
        private readonly Dictionary<uint, ulong> _peerSeq = [];
        private readonly Dictionary<uint, long> _peerLastSeen = [];

        // Receivers this registry dropped (unregistered, expired, no longer listed by their source,
        // or of a dead peer), with when to forget that: a peer's list that still holds one is not
        // taken back in until then. Without this two registries can hand a gone receiver back and
        // forth for ever (each re-learning it from the other's list), as zlink 1.3's can.
        private readonly Dictionary<(ushort Type, string Name, string Endpoint), long> _tombstones = [];
        private readonly long _heartbeatTimeoutMs;
        private readonly long _broadcastMs;
        private readonly int _tickMs;
        private readonly List<byte[]> _frames = [];
        private ulong _listSeq;
        private ulong _lastSentSeq;
        private long _nextBroadcast;

        public Worker(ZlinkContext context, RegistryOptions options)
            : base(context, "zlink registry")
        {
            _heartbeatTimeoutMs = (long)options.HeartbeatTimeout.TotalMilliseconds;
            _broadcastMs = (long)options.BroadcastInterval.TotalMilliseconds;
            _tickMs = (int)Math.Clamp(Math.Min(_heartbeatTimeoutMs, _broadcastMs) / 4, 5, 100);
            RegistryId = options.RegistryId is uint id && id != 0 ? id : RandomNonZero();
            _pub = context.CreateSocket(ZlinkSocketType.XPub);
            _router = context.CreateSocket(ZlinkSocketType.Router);
            try
            {
                _pub.SetOption(SocketOption.XPubVerbose, 1);
                _pub.Bind(options.PubEndpoint);
                _router.Bind(options.RouterEndpoint);
                PubEndpoint = _pub.LastEndpoint;
                RouterEndpoint = _router.LastEndpoint;
                foreach (string peer in options.Peers)
                {
                    ConnectPeer(peer);
                }
            }
            catch
            {
                _peerSub?.Dispose();
                _pub.Dispose();
                _router.Dispose();
                Dispose();
                throw;
            }

            _nextBroadcast = NowMs + _broadcastMs;
            StartThread();
        }

        public string PubEndpoint { get; }

        public string RouterEndpoint { get; }

        public uint RegistryId { get; }

        protected override int TickMilliseconds => _tickMs;

        private static uint RandomNonZero()
        {
            uint id = (uint)Random.Shared.NextInt64(1, uint.MaxValue);
            return id == 0 ? 1 : id;
        }

        public Task<bool> AddPeerAsync(string endpoint) => InvokeAsync(() =>
        {
            ConnectPeer(endpoint);
            return true;
        });

        public Task<IReadOnlyList<ReceiverInfo>> SnapshotAsync(ServiceType type) => InvokeAsync<IReadOnlyList<ReceiverInfo>>(() =>
            [.. _services.Where(s => s.Key.Type == (ushort)type)
                .SelectMany(s => s.Value.Values.Select(p => new ReceiverInfo(s.Key.Name, p.Endpoint, new RoutingId(p.RoutingId), p.Weight)))]);

        private void ConnectPeer(string endpoint)
        {
            if (_peerSub is null)
            {
                _peerSub = Context.CreateSocket(ZlinkSocketType.Sub);
                _peerSub.Subscribe(ReadOnlySpan<byte>.Empty);
                PollSetChanged();
            }

            if (_peers.Add(endpoint))
            {
                _peerSub.Connect(endpoint);
            }
        }

        protected override void AddPollItems(ZlinkPoller poller)
        {
            poller.Add(_router, PollEvents.PollIn); // 1
            poller.Add(_pub, PollEvents.PollIn); // 2
            if (_peerSub is not null)
            {
                poller.Add(_peerSub, PollEvents.PollIn); // 3
            }
        }

        protected override void OnPolled(ZlinkPoller poller)
        {
            if ((poller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
            {
                while (ReceiveMessage(_router))
                {
                    HandleRouter();
                }
            }

            if ((poller.GetReturnedEvents(2) & PollEvents.PollIn) != 0)
            {
                while (ReceiveMessage(_pub))
                {
                    // A new subscriber (\x01…) gets the list at once, as zlink's registry does.
                    if (_frames[0].Length > 0 && _frames[0][0] == 1)
                    {
                        SendServiceList();
                    }
                }
            }

            if (_peerSub is not null && poller.Count > 3 && (poller.GetReturnedEvents(3) & PollEvents.PollIn) != 0)
            {
                while (ReceiveMessage(_peerSub))
                {
                    HandlePeer();
                }
            }
        }

        private bool ReceiveMessage(ZlinkSocket socket)
        {
            _frames.Clear();
            return socket.TryReceiveMultipart(_frames);
        }

        private void HandleRouter()
        {
            if (_frames.Count < 2)
            {
                Refuse($"registry: a message of {_frames.Count} frames from a receiver, no control message");
                return;
            }

            byte[] sender = _frames[0];
            List<byte[]> body = _frames.GetRange(1, _frames.Count - 1);
            RegistryRequest request;
            try
            {
                request = ServiceProtocol.DecodeRegistryRequest(body);
            }
            catch (ServiceProtocolException e)
            {
                Refuse(e.Message);
                // zlink answers a bad REGISTER or UPDATE_WEIGHT: status 2 when the service name or
                // endpoint is empty, 0xFF for anything else; so do we, with the reason.
                if (body[0].Length == 2 && (body[0][0] == ServiceProtocol.Register || body[0][0] == ServiceProtocol.UpdateWeight) && body[0][1] == 0)
                {
                    bool emptyText = body.Count >= 4 && body[1].Length == 2 && (body[2].Length == 0 || body[3].Length == 0);
                    SendAck(sender, emptyText ? (byte)2 : (byte)0xFF, "", e.Message);
                }

                return;
            }

            var key = ((ushort)request.Type, request.Service);
            long now = NowMs;
            switch (request.MessageId)
            {
                case ServiceProtocol.Register:
                {
                    if (!_services.TryGetValue(key, out SortedDictionary<string, Provider>? providers))
                    {
                        _services[key] = providers = new SortedDictionary<string, Provider>(StringComparer.Ordinal);
                    }

                    _tombstones.Remove((key.Item1, key.Item2, request.Endpoint));
                    providers[request.Endpoint] = new Provider
                    {
                        Endpoint = request.Endpoint,
                        RoutingId = sender,
                        Weight = request.Weight,
                        LastHeartbeat = now,
                        SourceRegistry = RegistryId,
                    };
                    _listSeq++;
                    SendAck(sender, 0, request.Endpoint, "");
                    break;
                }

                case ServiceProtocol.Unregister:
                    if (_services.TryGetValue(key, out SortedDictionary<string, Provider>? ps)
                        && ps.TryGetValue(request.Endpoint, out Provider? p) && p.SourceRegistry == RegistryId)
                    {
                        ps.Remove(request.Endpoint);
                        Bury(key, request.Endpoint, now);
                        if (ps.Count == 0)
                        {
                            _services.Remove(key);
                        }

                        _listSeq++;
                    }

                    break;

                case ServiceProtocol.Heartbeat:
                    if (_services.TryGetValue(key, out ps) && ps.TryGetValue(request.Endpoint, out p))
                    {
                        p.LastHeartbeat = now;
                    }

                    break;

                case ServiceProtocol.UpdateWeight:
                    if (!_services.TryGetValue(key, out ps))
                    {
                        SendAck(sender, 1, request.Endpoint, "service not found");
                    }
                    else if (!ps.TryGetValue(request.Endpoint, out p))
                    {
                        SendAck(sender, 1, request.Endpoint, "provider not found");
                    }
                    else if (p.SourceRegistry != RegistryId)
                    {
                        SendAck(sender, 1, request.Endpoint, "provider not local");
                    }
                    else
                    {
                        p.Weight = request.Weight;
                        _listSeq++;
                        SendAck(sender, 0, request.Endpoint, "");
                    }

                    break;
            }
        }

        private void SendAck(byte[] sender, byte status, string endpoint, string error)
        {
            if (error.Length > ServiceProtocol.MaxTextLength)
            {
                error = error[..ServiceProtocol.MaxTextLength];
            }

            List<byte[]> ack = ServiceProtocol.EncodeRegisterAck(status, endpoint, error);
            ack.Insert(0, sender);
            // A receiver that went away takes no answer: the ROUTER drops it (not mandatory).
            _router.SendMultipart([.. ack]);
        }

        private void HandlePeer()
        {
            if (!TryDecode(ServiceProtocol.DecodeServiceList, _frames, out ServiceListMessage list))
            {
                return;
            }

            if (list.RegistryId == RegistryId)
            {
                return; // our own list, flooded back
            }

            long now = NowMs;
            _peerLastSeen[list.RegistryId] = now;
            if (_peerSeq.TryGetValue(list.RegistryId, out ulong seen) && list.ListSeq <= seen)
            {
                return; // old or repeated
            }

            _peerSeq[list.RegistryId] = list.ListSeq;

            // What the peer lists as its own, or passes on, replaces what we had from it; an
            // endpoint we hold from another source keeps that source (zlink's rule).
            var incoming = new Dictionary<(ushort, string), Dictionary<string, Provider>>();
            foreach (ServiceListEntry s in list.Services)
            {
                var key = ((ushort)s.Type, s.Name);
                if (!incoming.TryGetValue(key, out Dictionary<string, Provider>? d))
                {
                    incoming[key] = d = new Dictionary<string, Provider>(StringComparer.Ordinal);
                }

                foreach (ReceiverInfo r in s.Receivers)
                {
                    d[r.Endpoint] = new Provider
                    {
                        Endpoint = r.Endpoint,
                        RoutingId = r.RoutingId.ToArray(),
                        Weight = r.Weight,
                        LastHeartbeat = now,
                        SourceRegistry = list.RegistryId,
                    };
                }
            }

            bool changed = false;
            foreach (var (key, providers) in _services.ToList())
            {
                foreach (Provider p in providers.Values.ToList())
                {
                    if (p.SourceRegistry != list.RegistryId)
                    {
                        continue;
                    }

                    if (!incoming.TryGetValue(key, out Dictionary<string, Provider>? d) || !d.TryGetValue(p.Endpoint, out Provider? q))
                    {
                        changed = true;
                        Bury(key, p.Endpoint, now);
                    }
                    else if (q.Weight != p.Weight || !q.RoutingId.AsSpan().SequenceEqual(p.RoutingId))
                    {
                        changed = true;
                    }

                    providers.Remove(p.Endpoint);
                }

                if (providers.Count == 0)
                {
                    _services.Remove(key);
                }
            }

            foreach (var (key, d) in incoming)
            {
                if (!_services.TryGetValue(key, out SortedDictionary<string, Provider>? providers))
                {
                    _services[key] = providers = new SortedDictionary<string, Provider>(StringComparer.Ordinal);
                }

                foreach (Provider p in d.Values)
                {
                    if (providers.TryGetValue(p.Endpoint, out Provider? existing) && existing.SourceRegistry != list.RegistryId)
                    {
                        continue;
                    }

                    if (_tombstones.TryGetValue((key.Item1, key.Item2, p.Endpoint), out long until) && now < until)
                    {
                        continue;
                    }

                    if (!providers.ContainsKey(p.Endpoint))
                    {
                        changed = true;
                    }

                    providers[p.Endpoint] = p;
                }

                if (providers.Count == 0)
                {
                    _services.Remove(key);
                }
            }

            if (changed)
            {
                _listSeq++;
            }
        }

        protected override void OnTick(long nowMs)
        {
            RemoveExpired(nowMs);
            if (_listSeq != _lastSentSeq || nowMs >= _nextBroadcast)
            {
                SendServiceList();
            }
        }

        private void RemoveExpired(long now)
        {
            bool changed = false;
            long peerTimeout = _broadcastMs * 3;
            var deadPeers = _peerLastSeen.Where(kv => now - kv.Value > peerTimeout).Select(kv => kv.Key).ToHashSet();
            foreach (uint dead in deadPeers)
            {
                _peerLastSeen.Remove(dead);
                _peerSeq.Remove(dead);
            }

            foreach (var (grave, until) in _tombstones.ToList())
            {
                if (now >= until)
                {
                    // A peer may have listed the receiver again while it lay here (it moved to that
                    // peer): take every peer's next list whole, even at the same sequence.
                    _tombstones.Remove(grave);
                    _peerSeq.Clear();
                }
            }

            foreach (var (key, providers) in _services.ToList())
            {
                foreach (Provider p in providers.Values.ToList())
                {
                    bool expired = p.SourceRegistry == RegistryId
                        ? now - p.LastHeartbeat > _heartbeatTimeoutMs
                        : deadPeers.Contains(p.SourceRegistry);
                    if (expired)
                    {
                        providers.Remove(p.Endpoint);
                        Bury(key, p.Endpoint, now);
                        changed = true;
                    }
                }

                if (providers.Count == 0)
                {
                    _services.Remove(key);
                }
            }

            if (changed)
            {
                _listSeq++;
            }
        }

        private void Bury((ushort Type, string Name) key, string endpoint, long now) =>
            _tombstones[(key.Type, key.Name, endpoint)] = now + (_broadcastMs * 3);

        private void SendServiceList()
        {
            var entries = new List<ServiceListEntry>(_services.Count);
            foreach (var (key, providers) in _services)
            {
                if (providers.Count > 0)
                {
                    entries.Add(new ServiceListEntry((ServiceType)key.Type, key.Name,
                        [.. providers.Values.Select(p => new ReceiverInfo(key.Name, p.Endpoint, new RoutingId(p.RoutingId), p.Weight))]));
                }
            }

            List<byte[]> frames = ServiceProtocol.EncodeServiceList(RegistryId, _listSeq, entries);
            _pub.SendMultipart([.. frames]);
            _lastSentSeq = _listSeq;
            _nextBroadcast = NowMs + _broadcastMs;
        }

        protected override void OnStopped()
        {
            _peerSub?.Dispose();
            _pub.Dispose();
            _router.Dispose();
        }
    }
}
