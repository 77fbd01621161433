using System.Runtime.CompilerServices;

namespace NetZlink.Services;

/// <summary>Settings of a <see cref="ZlinkGateway"/>.</summary>
public sealed class GatewayOptions
{
    /// <summary>The routing id of the gateway's ROUTER (what receivers see as <see cref="ServiceMessage.Peer"/>);
    /// null: 5 random bytes, the first 0, as zlink makes them.</summary>
    public byte[]? RoutingId { get; set; }

    /// <summary>How long a send waits for room at a receiver whose queue is full (high-water mark
    /// 1,000,000 messages, as zlink) before it counts as not sent (1 s).</summary>
    public TimeSpan SendPatience { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The PEM file of the CAs a receiver's certificate is verified against on
    /// <c>tls://</c> and <c>wss://</c> endpoints (zlink_gateway_set_tls_client's <c>ca_cert</c>).
    /// Null (and <see cref="TlsTrustSystem"/> false): no TLS.</summary>
    public string? TlsCaFile { get; set; }

    /// <summary>The name checked against the receivers' certificates and sent as SNI
    /// (zlink_gateway_set_tls_client's <c>hostname</c>).</summary>
    public string? TlsHostname { get; set; }

    /// <summary>Also trust the system's CA store (zlink_gateway_set_tls_client's <c>trust_system</c>).</summary>
    public bool TlsTrustSystem { get; set; }

    /// <summary>The worker's longest sleep (tests: a long one shows a message left waiting for it).</summary>
    internal int TickMilliseconds { get; set; } = 100;
}

/// <summary>What <see cref="ZlinkGateway.DrainAsync"/> found when it ended.</summary>
public sealed class GatewayDrainResult
{
    internal GatewayDrainResult(long sent, long answered, string? reason)
    {
        Sent = sent;
        Answered = answered;
        Reason = reason;
    }

    /// <summary>True when every message sent was answered before the deadline.</summary>
    public bool Drained => Reason is null;

    /// <summary>Messages the gateway sent since it was created.</summary>
    public long Sent { get; }

    /// <summary>Messages the gateway received from receivers since it was created (answers are counted,
    /// not matched to requests: the protocol carries no request id).</summary>
    public long Answered { get; }

    /// <summary>Messages sent that got no answer: <see cref="Sent"/> minus <see cref="Answered"/>, at least 0.</summary>
    public long Outstanding => Math.Max(0, Sent - Answered);

    /// <summary>Why the drain did not end clean (answers missing at the deadline, or the gateway
    /// closed meanwhile); null when <see cref="Drained"/>.</summary>
    public string? Reason { get; }
}

/// <summary>
/// zlink's gateway, managed: sends each message to a receiver of a service that a
/// <see cref="ZlinkDiscovery"/> knows, connecting to the receivers as discovery reports them and
/// disconnecting when they leave, round-robin or weighted. One ROUTER addresses every receiver by
/// the routing id the registry listed. Sends are safe from any thread at once and allocate
/// nothing; answers come back through <see cref="ReceiveAsync"/> (or <see cref="Replies"/>) with
/// the service they came from.
/// </summary>
public sealed class ZlinkGateway : IAsyncDisposable, IDisposable
{
    private readonly Worker _worker;

    /// <summary>Creates a gateway over a discovery (which stays the caller's to dispose, after the gateway).</summary>
    /// <param name="context">The context its socket belongs to.</param>
    /// <param name="discovery">A discovery of <see cref="ServiceType.Gateway"/> services.</param>
    /// <param name="options">Routing id and send patience.</param>
    public ZlinkGateway(ZlinkContext context, ZlinkDiscovery discovery, GatewayOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(discovery);
        if (discovery.Type != ServiceType.Gateway)
        {
            throw new ArgumentException("a gateway needs a discovery of ServiceType.Gateway", nameof(discovery));
        }

        options ??= new GatewayOptions();
        if (options.RoutingId is { } rid && (rid.Length == 0 || rid.Length > ServiceProtocol.MaxRoutingIdLength))
        {
            throw new ArgumentException($"a routing id has 1 to {ServiceProtocol.MaxRoutingIdLength} bytes, not {rid.Length}", nameof(options));
        }

        ZlinkRegistry.Positive(options.SendPatience, nameof(options.SendPatience));
        ServiceTls.CheckClient(options.TlsCaFile, options.TlsHostname, options.TlsTrustSystem, nameof(options));
        _worker = new Worker(context, discovery, options);
    }

    /// <summary>The routing id of the gateway's ROUTER.</summary>
    public RoutingId RoutingId => new(_worker.RoutingIdBytes);

    /// <summary>Answers from receivers as a stream (the queue <see cref="ReceiveAsync"/> reads). Dispose each.</summary>
    public System.Threading.Channels.ChannelReader<ServiceMessage> Replies => _worker.Router.Incoming;

    /// <summary>Sets how the receivers of a service are chosen (round-robin by default).</summary>
    /// <param name="service">The service name.</param>
    /// <param name="strategy">The strategy.</param>
    public void SetLoadBalancing(string service, LoadBalancing strategy)
    {
        ZlinkReceiver.CheckText(service, nameof(service));
        if (strategy is not (LoadBalancing.RoundRobin or LoadBalancing.Weighted))
        {
            throw new ArgumentOutOfRangeException(nameof(strategy), strategy, "RoundRobin or Weighted");
        }

        _worker.SetStrategy(service, strategy);
    }

    /// <summary>How many receivers of a service the gateway is connected (or connecting) to.</summary>
    /// <param name="service">The service name.</param>
    public int ConnectionCount(string service)
    {
        ZlinkReceiver.CheckText(service, nameof(service));
        return _worker.ConnectionCount(service);
    }

    /// <summary>The receivers (endpoint and weight) the gateway now sends a service's messages to (tests).</summary>
    internal (string Endpoint, uint Weight)[] Targets(string service) => _worker.Targets(service);

    /// <summary>Sends a one-part message to the next receiver of <paramref name="service"/>.</summary>
    /// <param name="service">The service name.</param>
    /// <param name="payload">The part.</param>
    /// <returns>False when no receiver can take it now (none known, none connected yet, or all full
    /// past <see cref="GatewayOptions.SendPatience"/>); nothing was sent.</returns>
    public bool TrySend(string service, ReadOnlySpan<byte> payload) => _worker.TrySend(service, default, payload, default, false);

    /// <summary>Sends a multipart message to the next receiver of <paramref name="service"/>.</summary>
    /// <param name="service">The service name.</param>
    /// <param name="parts">The parts (at least one).</param>
    /// <returns>False when no receiver can take it now; nothing was sent.</returns>
    public bool TrySend(string service, ReadOnlySpan<ReadOnlyMemory<byte>> parts)
    {
        if (parts.IsEmpty)
        {
            throw new ArgumentException("a message has at least one part", nameof(parts));
        }

        return _worker.TrySend(service, default, default, parts, true);
    }

    /// <summary>Sends a one-part message to one receiver of the service, by its routing id (zlink_gateway_send_rid).</summary>
    /// <param name="service">The service name.</param>
    /// <param name="receiver">The receiver's routing id (<see cref="ReceiverInfo.RoutingId"/> or <see cref="ServiceMessage.Peer"/>).</param>
    /// <param name="payload">The part.</param>
    /// <returns>False when that receiver is not (or not yet) connected for that service.</returns>
    public bool TrySendTo(string service, ReadOnlySpan<byte> receiver, ReadOnlySpan<byte> payload)
    {
        if (receiver.IsEmpty)
        {
            throw new ArgumentException("the receiver's routing id is empty", nameof(receiver));
        }

        return _worker.TrySend(service, receiver, payload, default, false);
    }

    /// <summary>Sends a one-part message, throwing when no receiver can take it.</summary>
    /// <param name="service">The service name.</param>
    /// <param name="payload">The part.</param>
    /// <exception cref="ServiceUnavailableException">No receiver can take it now.</exception>
    public void Send(string service, ReadOnlySpan<byte> payload)
    {
        if (!TrySend(service, payload))
        {
            throw new ServiceUnavailableException($"no receiver of service '{service}' can take a message now ({ConnectionCount(service)} connected or connecting)");
        }
    }

    /// <summary>Sends a one-part message, waiting (without a thread) until a receiver of the service
    /// can take it.</summary>
    /// <param name="service">The service name.</param>
    /// <param name="payload">The part (not used after the returned task completes).</param>
    /// <param name="cancellationToken">Ends the wait; then nothing was sent.</param>
    public ValueTask SendAsync(string service, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken); // cancelled before it began: nothing sent
        }

        if (TrySend(service, payload.Span))
        {
            return ValueTask.CompletedTask;
        }

        return Retry(service, payload, cancellationToken);
    }

    private async ValueTask Retry(string service, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken)
    {
        int delay = 1;
        while (!TrySend(service, payload.Span))
        {
            await Task.Delay(delay, cancellationToken).ConfigureAwait(false);
            delay = Math.Min(delay * 2, 50);
        }
    }

    /// <summary>Receives the next answer. Dispose the message when done.</summary>
    /// <param name="cancellationToken">Ends the wait.</param>
    public ValueTask<ServiceMessage> ReceiveAsync(CancellationToken cancellationToken = default) =>
        _worker.Router.ReceiveAsync(cancellationToken);

    /// <summary>
    /// Receives the next answer on the caller's thread, blocking it up to <paramref name="timeout"/>:
    /// for a caller with a thread of its own (a loop that does nothing else), where
    /// <see cref="ReceiveAsync"/> would resume on the thread pool after every wait. The thread that
    /// fills the queue wakes this caller directly. Safe from any number of threads at once, mixed
    /// with <see cref="ReceiveAsync"/> and <see cref="Replies"/>: each message goes to one reader.
    /// </summary>
    /// <param name="timeout">How long to wait: <see cref="TimeSpan.Zero"/> only looks,
    /// <see cref="Timeout.InfiniteTimeSpan"/> waits without a limit.</param>
    /// <param name="message">The answer (dispose it when done); null when false is returned.</param>
    /// <returns>False when <paramref name="timeout"/> passed with nothing received.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than
    /// <see cref="Timeout.InfiniteTimeSpan"/>) or above <see cref="int.MaxValue"/> milliseconds.</exception>
    /// <exception cref="System.Threading.Channels.ChannelClosedException">The gateway was disposed, or a drain ended <see cref="Replies"/>, and nothing is left to read (as <see cref="ReceiveAsync"/>).</exception>
    public bool TryReceive(TimeSpan timeout, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out ServiceMessage? message) =>
        _worker.Router.TryReceive(timeout, out message);

    /// <summary>
    /// A graceful stop: the gateway takes no more sends (each throws
    /// <see cref="InvalidOperationException"/>) and waits, up to <paramref name="timeout"/>, until it
    /// has received as many messages as it sent. Then <see cref="Replies"/> completes: the answers
    /// already received stay readable, then reads end with a <see cref="System.Threading.Channels.ChannelClosedException"/>
    /// (when answers were missing, it or its <see cref="Exception.InnerException"/> gives the reason); answers that come later are dropped. A second
    /// call returns the same task. Dispose the gateway afterwards as usual.
    /// </summary>
    /// <param name="timeout">How long to wait for the answers; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <returns>The counts, and the reason when answers were missing.</returns>
    public Task<GatewayDrainResult> DrainAsync(TimeSpan timeout)
    {
        if (timeout < TimeSpan.Zero && timeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(timeout), timeout, "zero or more, or Timeout.InfiniteTimeSpan");
        }

        return _worker.DrainAsync(timeout);
    }

    /// <summary>Closes the gateway (its connections end; the discovery is left open).</summary>
    public void Dispose() => _worker.Dispose();

    /// <summary>As <see cref="Dispose"/>, without blocking the caller.</summary>
    public ValueTask DisposeAsync() => _worker.DisposeAsync();

    private sealed class Target
    {
        public required string Endpoint;
        public required byte[] RoutingId;
        public uint Weight;
    }

    private sealed class Pool
    {
        public required string Service;
        public Target[] Targets = [];
        public LoadBalancing Strategy;
        public ulong Next;
        public long TotalWeight;
    }

    private sealed class Worker : ServiceWorker
    {
        private readonly ZlinkDiscovery _discovery;
        private readonly Action<string> _observer;
        private readonly Dictionary<string, Pool> _pools = new(StringComparer.Ordinal);
        private readonly Dictionary<string, Pool>.AlternateLookup<ReadOnlySpan<char>> _lookup;
        private readonly Dictionary<byte[], string> _serviceByRid = new(ByteKeyComparer.Instance);
        private readonly Dictionary<byte[], string>.AlternateLookup<ReadOnlySpan<byte>> _serviceByRidLookup;
        private readonly int _patienceMs;
        private readonly int _tickMs;
        private long _drainedAt;
        private long _sent; // under Router.Gate
        private Task<GatewayDrainResult>? _drain; // set under Router.Gate: no more sends once set
        private bool _standingBack; // the poll set leaves the ROUTER to a direct reader (worker thread only)

        public Worker(ZlinkContext context, ZlinkDiscovery discovery, GatewayOptions options)
            : base(context, "zlink gateway")
        {
            _discovery = discovery;
            _patienceMs = (int)Math.Min(options.SendPatience.TotalMilliseconds, int.MaxValue);
            _tickMs = options.TickMilliseconds;
            _lookup = _pools.GetAlternateLookup<ReadOnlySpan<char>>();
            _serviceByRidLookup = _serviceByRid.GetAlternateLookup<ReadOnlySpan<byte>>();
            Router = new SharedRouter(context, ServiceOf, immediate: true);
            Router.WorkerNeeded = PollSetChangedSoon;
            RoutingIdBytes = options.RoutingId is { } id ? (byte[])id.Clone() : [0, .. BitConverter.GetBytes((uint)Random.Shared.NextInt64(1, uint.MaxValue))];
            try
            {
                Router.Socket.SetOption(SocketOption.RoutingId, RoutingIdBytes);
            }
            catch (SocketOptionException) when (options.RoutingId is null)
            {
                RoutingIdBytes[0] = 1;
                Router.Socket.SetOption(SocketOption.RoutingId, RoutingIdBytes);
            }

            // zlink_gateway_set_tls_client: before the ROUTER connects to any receiver.
            ServiceTls.ApplyClient(Router.Socket, options.TlsCaFile, options.TlsHostname, options.TlsTrustSystem);
            _observer = service => Post(() => Refresh(service));
            discovery.AddObserver(_observer);
            StartThread();
        }

        public SharedRouter Router { get; }

        public byte[] RoutingIdBytes { get; }

        protected override int TickMilliseconds => _tickMs;

        // Called under Router.Gate (DrainLocked): which service an answering receiver is in.
        // The last answer's receiver and service (a run of answers mostly comes from one receiver):
        // a comparison of a few bytes instead of a hash and a lookup. Under the gate, as the map.
        private byte[]? _lastRid;
        private string _lastService = "";

        // The last send's service name and pool: the same string object is the common case.
        private string? _lastName;
        private Pool? _lastPool;

        private string ServiceOf(ReadOnlySpan<byte> rid)
        {
            if (_lastRid is { } last && rid.SequenceEqual(last))
            {
                return _lastService;
            }

            if (!_serviceByRidLookup.TryGetValue(rid, out byte[]? key, out string? service))
            {
                return "";
            }

            _lastRid = key;
            _lastService = service;
            return service;
        }

        public void SetStrategy(string service, LoadBalancing strategy)
        {
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                PoolLocked(service).Strategy = strategy;
            }
        }

        public (string Endpoint, uint Weight)[] Targets(string service)
        {
            lock (Router.Gate)
            {
                return [.. PoolLocked(service).Targets.Select(t => (t.Endpoint, t.Weight))];
            }
        }

        public int ConnectionCount(string service)
        {
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                return PoolLocked(service).Targets.Length;
            }
        }

        /// <summary>As <see cref="PoolLocked"/>, remembering the last name (pools are never removed).</summary>
        private Pool LastPoolLocked(string service)
        {
            if (!ReferenceEquals(service, _lastName) || _lastPool is null)
            {
                _lastPool = PoolLocked(service);
                _lastName = service;
            }

            return _lastPool;
        }

        private Pool PoolLocked(ReadOnlySpan<char> service)
        {
            if (_lookup.TryGetValue(service, out Pool? pool))
            {
                return pool;
            }

            string name = service.ToString();
            ZlinkReceiver.CheckText(name, nameof(service));
            pool = new Pool { Service = name };
            _pools[name] = pool;
            RefreshLocked(pool, _discovery.GetReceivers(name));
            return pool;
        }

        [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message
        public bool TrySend(string service, ReadOnlySpan<byte> rid, ReadOnlySpan<byte> payload, ReadOnlySpan<ReadOnlyMemory<byte>> parts, bool multipart)
        {
            ArgumentException.ThrowIfNullOrEmpty(service);
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                ObjectDisposedException.ThrowIf(Router.Socket.IsDisposed, typeof(ZlinkGateway));
                if (_drain is not null)
                {
                    throw new InvalidOperationException("the gateway is draining (DrainAsync was called): it takes no more sends");
                }

                Pool pool = LastPoolLocked(service);
                Target[] targets = pool.Targets;
                if (targets.Length == 0)
                {
                    return false;
                }

                if (!rid.IsEmpty)
                {
                    foreach (Target t in targets)
                    {
                        if (rid.SequenceEqual(t.RoutingId))
                        {
                            return SendTo(t, payload, parts, multipart);
                        }
                    }

                    return false;
                }

                // Try each receiver at most once, starting at the strategy's choice: one whose
                // connection is not complete yet is skipped (ROUTER_MANDATORY says so), not waited for.
                for (int attempt = 0; attempt < targets.Length; attempt++)
                {
                    Target t = targets[Pick(pool, targets, attempt)];
                    if (SendTo(t, payload, parts, multipart))
                    {
                        return true;
                    }
                }

                return false;
            }
        }

        private static int Pick(Pool pool, Target[] targets, int attempt)
        {
            ulong n = pool.Next++;
            if (attempt > 0 || pool.Strategy != LoadBalancing.Weighted || pool.TotalWeight <= 0)
            {
                return (int)(n % (ulong)targets.Length);
            }

            long slot = (long)(n % (ulong)pool.TotalWeight);
            for (int i = 0; i < targets.Length; i++)
            {
                if (slot < targets[i].Weight)
                {
                    return i;
                }

                slot -= targets[i].Weight;
            }

            return targets.Length - 1;
        }

        private bool SendTo(Target t, ReadOnlySpan<byte> payload, ReadOnlySpan<ReadOnlyMemory<byte>> parts, bool multipart)
        {
            bool sent = multipart ? Router.TrySendLocked(t.RoutingId, parts, _patienceMs) : Router.TrySendLocked(t.RoutingId, payload, _patienceMs);
            if (sent)
            {
                _sent++;
            }

            return sent;
        }

        public Task<GatewayDrainResult> DrainAsync(TimeSpan timeout)
        {
            ThrowIfFaulted();
            lock (Router.Gate)
            {
                ObjectDisposedException.ThrowIf(Router.Socket.IsDisposed, typeof(ZlinkGateway));
                if (_drain is null)
                {
                    // From here on no send passes the gate: _sent is final.
                    var done = new TaskCompletionSource<GatewayDrainResult>(TaskCreationOptions.RunContinuationsAsynchronously);
                    _drain = done.Task;
                    _ = RunDrain(done, _sent, timeout);
                }

                return _drain;
            }
        }

        private async Task RunDrain(TaskCompletionSource<GatewayDrainResult> done, long sent, TimeSpan timeout)
        {
            await Task.Yield(); // off the caller's thread and out of its hold of the gate
            long deadline = timeout == Timeout.InfiniteTimeSpan ? long.MaxValue : NowMs + (long)timeout.TotalMilliseconds;
            int delay = 1;
            while (true)
            {
                long answered;
                bool closed;
                lock (Router.Gate)
                {
                    closed = Router.Socket.IsDisposed;
                    Router.DrainLocked(); // counts what the socket holds now
                    answered = Router.Received;
                }

                string? reason = null;
                if (closed)
                {
                    reason = $"the gateway was closed while draining; {Math.Max(0, sent - answered)} of {sent} messages sent got no answer";
                }
                else if (answered < sent && NowMs >= deadline)
                {
                    reason = $"{sent - answered} of {sent} messages sent got no answer within {timeout}";
                }
                else if (answered < sent)
                {
                    await Task.Delay((int)Math.Min(delay, Math.Max(1, deadline - NowMs))).ConfigureAwait(false);
                    delay = Math.Min(delay * 2, 20);
                    continue;
                }

                Router.Complete(reason);
                done.TrySetResult(new GatewayDrainResult(sent, answered, reason));
                return;
            }
        }

        private void Refresh(string service)
        {
            IReadOnlyList<ReceiverInfo> receivers = _discovery.GetReceivers(service);
            lock (Router.Gate)
            {
                if (_pools.TryGetValue(service, out Pool? pool) && !Router.Socket.IsDisposed)
                {
                    RefreshLocked(pool, receivers);
                }
            }
        }

        private void RefreshLocked(Pool pool, IReadOnlyList<ReceiverInfo> receivers)
        {
            var next = new List<Target>(receivers.Count);
            var keep = new HashSet<string>(StringComparer.Ordinal);
            foreach (ReceiverInfo r in receivers)
            {
                if (r.RoutingId.IsEmpty || !keep.Add(r.Endpoint))
                {
                    continue;
                }

                Target? existing = Array.Find(pool.Targets, t => t.Endpoint == r.Endpoint);
                if (existing is not null && existing.RoutingId.AsSpan().SequenceEqual(r.RoutingId.Span))
                {
                    existing.Weight = Math.Max(1, r.Weight);
                    next.Add(existing);
                    continue;
                }

                if (existing is not null)
                {
                    Disconnect(existing); // same endpoint, new receiver (it restarted): connect afresh
                }

                var target = new Target { Endpoint = r.Endpoint, RoutingId = r.RoutingId.ToArray(), Weight = Math.Max(1, r.Weight) };
                // zlink's gateway names the connection with CONNECT_ROUTING_ID; this one does not:
                // the receiver's ROUTER announces the same id in the handshake, and with
                // ROUTER_HANDOVER a reconnection under that id takes over. (libzmq's ROUTER aborts
                // the process when a CONNECT_ROUTING_ID names a peer it still has, which a
                // receiver that leaves and comes back at once would cause.)
                try
                {
                    Router.Socket.Connect(target.Endpoint);
                }
                catch (ZlinkException e)
                {
                    Refuse($"gateway: cannot connect to receiver {r.Endpoint} of {pool.Service}: {e.Message}");
                    continue;
                }

                next.Add(target);
            }

            foreach (Target gone in pool.Targets)
            {
                if (!next.Contains(gone) && !keep.Contains(gone.Endpoint))
                {
                    Disconnect(gone);
                }
            }

            foreach (Target t in pool.Targets)
            {
                _serviceByRid.Remove(t.RoutingId);
            }

            _lastRid = null;

            pool.Targets = [.. next];
            pool.TotalWeight = next.Sum(t => (long)t.Weight);
            foreach (Target t in next)
            {
                _serviceByRid[t.RoutingId] = pool.Service;
            }
        }

        private void Disconnect(Target t)
        {
            try
            {
                Router.Socket.Disconnect(t.Endpoint);
            }
            catch (EndpointException)
            {
                // Already gone (ENOENT): nothing to end.
            }
        }

        // While a reader waits on the ROUTER's descriptor itself (TryReceive), the worker leaves it
        // to that reader (polls it for nothing) and only drains on its ticks.
        protected override void AddPollItems(ZlinkPoller poller)
        {
            _standingBack = Router.WorkerStandsBack;
            poller.Add(Router.FileDescriptor, _standingBack ? PollEvents.None : PollEvents.PollIn);
        }

        protected override void OnPolled(ZlinkPoller poller)
        {
            if ((poller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
            {
                if (Router.WorkerStandsBack)
                {
                    PollSetChanged();
                }
                else
                {
                    Drain(NowMs);
                }
            }
        }

        // The descriptor is edge-like: look again after commands ran (they used the socket) and
        // every tick, so nothing waits on a lost edge; not again right after a drain.
        protected override void OnTick(long nowMs)
        {
            if (_standingBack && !Router.WorkerStandsBack)
            {
                PollSetChanged();
            }

            // A direct reader busy reading drains before it sleeps: no lost edge can strand anything.
            if (CommandsRan || (nowMs - _drainedAt >= TickMilliseconds / 2 && !Router.DirectReaderBusy))
            {
                Drain(nowMs);
            }
        }

        private void Drain(long nowMs)
        {
            _drainedAt = nowMs;
            lock (Router.Gate)
            {
                Router.DrainLocked();
            }
        }

        protected override void OnStopped()
        {
            _discovery.RemoveObserver(_observer);
            Router.Complete();
        }

        protected override void OnDisposing() => Router.Complete();

        protected override void DisposeShared() => Router.Dispose();
    }
}
