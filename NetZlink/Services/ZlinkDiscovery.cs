using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>
/// zlink's service discovery, managed: subscribes to one or more registries' publish endpoints and
/// keeps the latest list of the services of one <see cref="ServiceType"/> and their receivers.
/// Lists from one registry are applied in order (an older or repeated list sequence is ignored).
/// The picture is the union of the latest list of every registry heard from within the registry
/// timeout (zlink takes the last list of any registry as the whole picture, so its view flips
/// while the registries of a cluster disagree). Every member is safe from any thread; changes are
/// also a stream (<see cref="Updates"/>).
/// </summary>
public sealed class ZlinkDiscovery : IAsyncDisposable, IDisposable
{
    private readonly Worker _worker;

    /// <summary>Creates a discovery of gateway receivers or of SPOT nodes.</summary>
    /// <param name="context">The context its socket belongs to.</param>
    /// <param name="type">Which services it sees (zlink_discovery_new_typed).</param>
    /// <param name="registryTimeout">A registry not heard from for this long no longer counts
    /// (null: 90 s, three of zlink's default broadcast intervals; registries publish at least once
    /// per broadcast interval, so set it to three of theirs).</param>
    /// <param name="timeProvider">The clock of <see cref="RegistryContact.LastHeard"/> (null: the
    /// system clock); the registry timeout itself runs on the monotonic clock.</param>
    public ZlinkDiscovery(ZlinkContext context, ServiceType type = ServiceType.Gateway, TimeSpan? registryTimeout = null, TimeProvider? timeProvider = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        ZlinkRegistry.Positive(registryTimeout ?? TimeSpan.FromSeconds(90), nameof(registryTimeout));
        if (type is not (ServiceType.Gateway or ServiceType.Spot))
        {
            throw new ArgumentOutOfRangeException(nameof(type), type, "a discovery is for ServiceType.Gateway or ServiceType.Spot");
        }

        _worker = new Worker(context, type, (long)(registryTimeout ?? TimeSpan.FromSeconds(90)).TotalMilliseconds, timeProvider ?? TimeProvider.System);
    }

    /// <summary>The type of services seen.</summary>
    public ServiceType Type => _worker.Type;

    /// <summary>Every change of a service's receivers, in order, from the first time this
    /// property is read (before that nothing is kept); unbounded: one small entry per change, kept
    /// until read.</summary>
    public ChannelReader<DiscoveryUpdate> Updates => _worker.Updates;

    /// <summary>SERVICE_LIST messages refused as not following the protocol.</summary>
    public long RefusedMessages => _worker.RefusedMessages;

    /// <summary>Why the last refused message was refused.</summary>
    public string? LastRefusal => _worker.LastRefusal;

    /// <summary>The registries subscribed to, in the order they were connected, each with when it
    /// was last heard from (its last well-formed SERVICE_LIST), its registry id and list sequence.
    /// A registry publishes at least once per broadcast interval, so one silent for several of
    /// those is gone or cut off. A snapshot: read it again for news.</summary>
    public IReadOnlyList<RegistryContact> Registries => _worker.Contacts();

    /// <summary>Subscribes to a registry's publish endpoint (zlink_discovery_connect_registry).</summary>
    /// <param name="registryPubEndpoint">The registry's <see cref="ZlinkRegistry.PubEndpoint"/>.</param>
    public Task ConnectRegistryAsync(string registryPubEndpoint)
    {
        ArgumentException.ThrowIfNullOrEmpty(registryPubEndpoint);
        return _worker.ConnectAsync(registryPubEndpoint);
    }

    /// <summary>Limits what this discovery answers to the services subscribed (none subscribed: all).
    /// A local filter, as in zlink: the registries still send everything.</summary>
    /// <param name="service">The service name.</param>
    public void Subscribe(string service)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        _worker.SetSubscribed(service, true);
    }

    /// <summary>Removes a service from the filter of <see cref="Subscribe"/>.</summary>
    /// <param name="service">The service name.</param>
    public void Unsubscribe(string service)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        _worker.SetSubscribed(service, false);
    }

    /// <summary>The receivers of a service now (empty when unknown or filtered out).</summary>
    /// <param name="service">The service name.</param>
    public IReadOnlyList<ReceiverInfo> GetReceivers(string service)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        return _worker.Get(service);
    }

    /// <summary>How many receivers a service has now.</summary>
    /// <param name="service">The service name.</param>
    public int ReceiverCount(string service) => GetReceivers(service).Count;

    /// <summary>Whether a service has at least one receiver now.</summary>
    /// <param name="service">The service name.</param>
    public bool IsServiceAvailable(string service) => GetReceivers(service).Count > 0;

    /// <summary>Waits until <paramref name="predicate"/> holds for a service's receivers.</summary>
    /// <param name="service">The service name.</param>
    /// <param name="predicate">The condition on the receivers.</param>
    /// <param name="cancellationToken">Ends the wait with <see cref="OperationCanceledException"/>.</param>
    public async Task<IReadOnlyList<ReceiverInfo>> WaitForAsync(string service, Func<IReadOnlyList<ReceiverInfo>, bool> predicate, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        ArgumentNullException.ThrowIfNull(predicate);
        while (true)
        {
            Task changed = _worker.NextChange;
            IReadOnlyList<ReceiverInfo> now = GetReceivers(service);
            if (predicate(now))
            {
                return now;
            }

            await changed.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    internal void AddObserver(Action<string> observer) => _worker.AddObserver(observer);

    internal void RemoveObserver(Action<string> observer) => _worker.RemoveObserver(observer);

    /// <summary>Stops the discovery and closes its socket.</summary>
    public void Dispose() => _worker.Dispose();

    /// <summary>Stops the discovery without blocking the caller.</summary>
    public ValueTask DisposeAsync() => _worker.DisposeAsync();

    private sealed class Worker : ServiceWorker
    {
        // One SUB per registry endpoint, so each list is known by where it came from.
        private readonly List<Subscription> _subs = [];
        private readonly Lock _gate = new();
        private readonly HashSet<string> _subscriptions = [];
        private readonly Dictionary<uint, Snapshot> _registries = [];
        private readonly long _registryTimeoutMs;
        private readonly List<byte[]> _frames = [];
        private Channel<DiscoveryUpdate>? _updates;
        private Dictionary<string, IReadOnlyList<ReceiverInfo>> _services = new(StringComparer.Ordinal);
        private Action<string>[] _observers = [];
        private TaskCompletionSource _nextChange = new(TaskCreationOptions.RunContinuationsAsynchronously);

        private readonly TimeProvider _time;

        public Worker(ZlinkContext context, ServiceType type, long registryTimeoutMs, TimeProvider time)
            : base(context, "zlink discovery")
        {
            _time = time;
            _registryTimeoutMs = registryTimeoutMs;
            Type = type;
            StartThread();
        }

        public ServiceType Type { get; }

        public ChannelReader<DiscoveryUpdate> Updates
        {
            get => LazyChannel.Reader(ref _updates, IsStopping);
        }

        public Task NextChange
        {
            get
            {
                lock (_gate)
                {
                    return _nextChange.Task;
                }
            }
        }

        public Task<bool> ConnectAsync(string endpoint) => InvokeAsync(() =>
        {
            lock (_gate)
            {
                if (_subs.Exists(s => s.Endpoint == endpoint))
                {
                    return true;
                }
            }

            ZlinkSocket sub = Context.CreateSocket(ZlinkSocketType.Sub);
            try
            {
                sub.Subscribe(ReadOnlySpan<byte>.Empty);
                sub.Connect(endpoint);
            }
            catch
            {
                sub.Dispose();
                throw;
            }

            lock (_gate)
            {
                _subs.Add(new Subscription(endpoint, sub));
            }

            PollSetChanged();
            return true;
        });

        public IReadOnlyList<RegistryContact> Contacts()
        {
            ThrowIfFaulted();
            lock (_gate)
            {
                return [.. _subs.Select(s => s.Contact)];
            }
        }

        public void SetSubscribed(string service, bool on)
        {
            lock (_gate)
            {
                if (on)
                {
                    _subscriptions.Add(service);
                }
                else
                {
                    _subscriptions.Remove(service);
                }
            }
        }

        public IReadOnlyList<ReceiverInfo> Get(string service)
        {
            ThrowIfFaulted();
            lock (_gate)
            {
                if (_subscriptions.Count > 0 && !_subscriptions.Contains(service))
                {
                    return [];
                }

                return _services.TryGetValue(service, out IReadOnlyList<ReceiverInfo>? r) ? r : [];
            }
        }

        public void AddObserver(Action<string> observer)
        {
            lock (_gate)
            {
                _observers = [.. _observers, observer];
            }
        }

        public void RemoveObserver(Action<string> observer)
        {
            lock (_gate)
            {
                _observers = [.. _observers.Where(o => o != observer)];
            }
        }

        private Subscription[] _polled = [];

        protected override void AddPollItems(ZlinkPoller poller)
        {
            lock (_gate)
            {
                _polled = [.. _subs];
            }

            foreach (Subscription s in _polled)
            {
                poller.Add(s.Socket, PollEvents.PollIn); // 1, 2, …
            }
        }

        protected override void OnPolled(ZlinkPoller poller)
        {
            for (int i = 0; i < _polled.Length; i++)
            {
                if ((poller.GetReturnedEvents(i + 1) & PollEvents.PollIn) == 0)
                {
                    continue;
                }

                _frames.Clear();
                while (_polled[i].Socket.TryReceiveMultipart(_frames))
                {
                    Handle(_polled[i]);
                    _frames.Clear();
                }
            }
        }

        private void Handle(Subscription from)
        {
            if (!TryDecode(ServiceProtocol.DecodeServiceList, _frames, out ServiceListMessage list))
            {
                return;
            }

            lock (_gate)
            {
                from.Contact = new RegistryContact(from.Endpoint, _time.GetUtcNow(), list.RegistryId, list.ListSeq);
            }

            long now = NowMs;
            if (_registries.TryGetValue(list.RegistryId, out Snapshot? known))
            {
                known.LastHeard = now;
                if (list.ListSeq <= known.Seq)
                {
                    return; // old or repeated
                }
            }

            var services = new Dictionary<string, List<ReceiverInfo>>(StringComparer.Ordinal);
            foreach (ServiceListEntry s in list.Services)
            {
                if (s.Type != Type)
                {
                    continue;
                }

                if (!services.TryGetValue(s.Name, out List<ReceiverInfo>? l))
                {
                    services[s.Name] = l = [];
                }

                l.AddRange(s.Receivers);
            }

            _registries[list.RegistryId] = new Snapshot { Seq = list.ListSeq, LastHeard = now, Services = services, Order = ++_order };
            Publish();
        }

        private long _order;

        /// <summary>Recomputes the union of every registry's latest list and reports what changed.</summary>
        private void Publish()
        {
            var next = new Dictionary<string, IReadOnlyList<ReceiverInfo>>(StringComparer.Ordinal);
            // The most recently updated registry's entry wins where two list one endpoint differently.
            foreach (Snapshot snapshot in _registries.Values.OrderByDescending(r => r.Order))
            {
                foreach (var (name, receivers) in snapshot.Services)
                {
                    List<ReceiverInfo> merged = next.TryGetValue(name, out IReadOnlyList<ReceiverInfo>? have) ? (List<ReceiverInfo>)have : [];
                    foreach (ReceiverInfo r in receivers)
                    {
                        if (!merged.Exists(m => m.Endpoint == r.Endpoint))
                        {
                            merged.Add(r);
                        }
                    }

                    if (merged.Count > 0)
                    {
                        next[name] = merged;
                    }
                }
            }

            foreach (List<ReceiverInfo> l in next.Values.Cast<List<ReceiverInfo>>())
            {
                l.Sort((x, y) => string.CompareOrdinal(x.Endpoint, y.Endpoint));
            }

            var changed = new List<DiscoveryUpdate>();
            Action<string>[] observers;
            TaskCompletionSource? fire = null;
            lock (_gate)
            {
                foreach (var (name, receivers) in next)
                {
                    if (!_services.TryGetValue(name, out IReadOnlyList<ReceiverInfo>? old) || !old.SequenceEqual(receivers))
                    {
                        changed.Add(new DiscoveryUpdate(name, receivers));
                    }
                }

                foreach (string name in _services.Keys)
                {
                    if (!next.ContainsKey(name))
                    {
                        changed.Add(new DiscoveryUpdate(name, []));
                    }
                }

                _services = next;
                observers = _observers;
                if (changed.Count > 0)
                {
                    fire = _nextChange;
                    _nextChange = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                }
            }

            foreach (DiscoveryUpdate u in changed)
            {
                Volatile.Read(ref _updates)?.Writer.TryWrite(u);
                foreach (Action<string> o in observers)
                {
                    o(u.Service);
                }
            }

            fire?.TrySetResult();
        }

        protected override void OnTick(long nowMs)
        {
            bool expired = false;
            foreach (var (id, snapshot) in _registries.ToList())
            {
                if (nowMs - snapshot.LastHeard > _registryTimeoutMs)
                {
                    _registries.Remove(id);
                    expired = true;
                }
            }

            if (expired)
            {
                Publish();
            }
        }

        private sealed class Subscription(string endpoint, ZlinkSocket socket)
        {
            public string Endpoint { get; } = endpoint;

            public ZlinkSocket Socket { get; } = socket;

            /// <summary>Written and read under the worker's gate.</summary>
            public RegistryContact Contact { get; set; } = new(endpoint, null, null, null);
        }

        private sealed class Snapshot
        {
            public ulong Seq;
            public long LastHeard;
            public long Order;
            public required Dictionary<string, List<ReceiverInfo>> Services;
        }

        protected override void OnStopped()
        {
            lock (_gate)
            {
                foreach (Subscription s in _subs)
                {
                    s.Socket.Dispose();
                }
            }

            Volatile.Read(ref _updates)?.Writer.TryComplete();
            lock (_gate)
            {
                _nextChange.TrySetException(new ObjectDisposedException(nameof(ZlinkDiscovery)));
            }
        }
    }
}
