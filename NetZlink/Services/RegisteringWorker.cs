using System.Collections.Concurrent;
using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>
/// A service worker that registers itself with a registry: a gateway receiver or a SPOT node. It
/// owns the DEALER to the registry (with the same routing id as what it registers, which the
/// registry lists), sends REGISTER, UPDATE_WEIGHT and UNREGISTER, matches REGISTER_ACKs to what
/// waits for them, and renews every registration with a HEARTBEAT each interval.
/// <para>
/// The registry connection is watched (a monitor of the DEALER): when it drops, every registration
/// is marked lost, and when it is made again (the same registry back, or a new one on the same
/// endpoint) every registration is sent again as a REGISTER. The DEALER sets IMMEDIATE, so nothing
/// waits in a pipe for a registry that is not there: a REGISTER goes out only on a connection that
/// is up, and a registration withdrawn before that (a cancelled <see cref="RegisterAsync"/>) never
/// reaches a registry.
/// </para>
/// </summary>
internal abstract class RegisteringWorker : ServiceWorker
{
    private const MonitorEvents Watched = MonitorEvents.ConnectionReady | MonitorEvents.Disconnected;

    private readonly ServiceType _type;
    private readonly long _heartbeatMs;
    private readonly Dictionary<string, Registration> _registrations = new(StringComparer.Ordinal);
    private readonly Queue<Awaiting> _awaitingAck = new();
    private readonly List<(string Service, string Endpoint)> _pendingUnregister = [];
    private readonly ConcurrentDictionary<string, RegistrationState> _states = new(StringComparer.Ordinal);
    private readonly List<byte[]> _frames = [];
    private Channel<RegistrationChange>? _changes;
    private ZlinkSocket? _dealer;
    private ZlinkMonitor? _monitor;
    private bool _connected;
    private int _dealerIndex = -1;
    private long _nextHeartbeat;

    protected RegisteringWorker(ZlinkContext context, string name, ServiceType type, TimeSpan heartbeatInterval, byte[] routingId)
        : base(context, name)
    {
        _type = type;
        _heartbeatMs = (long)heartbeatInterval.TotalMilliseconds;
        RoutingIdBytes = routingId;
    }

    /// <summary>The routing id of the registry connection (what the registry lists).</summary>
    public byte[] RoutingIdBytes { get; }

    /// <summary>The endpoint advertised when the caller gives none (null: nothing bound).</summary>
    protected abstract string? BoundEndpoint { get; }

    protected override int TickMilliseconds => (int)Math.Clamp(_heartbeatMs / 2, 5, 100);

    /// <summary>Every change of a registration, from the first read (nothing is kept before).</summary>
    public ChannelReader<RegistrationChange> Changes
    {
        get => LazyChannel.Reader(ref _changes, IsStopping);
    }

    /// <summary>Where the registration of <paramref name="service"/> stands now.</summary>
    public RegistrationState StateOf(string service) =>
        _states.TryGetValue(service, out RegistrationState s) ? s : RegistrationState.NotRegistered;

    public Task<bool> ConnectRegistryAsync(string endpoint) => InvokeAsync(() =>
    {
        if (_dealer is not null)
        {
            Lost($"the registry connection was replaced by one to {endpoint}");
            CloseDealer();
        }

        // UNREGISTERs still owed to the old registry go with it: the new one never held them.
        _pendingUnregister.Clear();
        _dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
        _dealer.SetOption(SocketOption.RoutingId, RoutingIdBytes);
        _dealer.SetOption(SocketOption.Immediate, 1);
        ConfigureDealer(_dealer);
        _connected = false;
        if (endpoint.StartsWith("inproc://", StringComparison.Ordinal))
        {
            // inproc connections raise no monitor events: sends are tried until the pipe is there.
            _connected = true;
        }
        else
        {
            try
            {
                _monitor = _dealer.OpenMonitor(Watched);
            }
            catch (ZlinkException)
            {
                // A library without monitors: registrations are tried until they go, and a
                // registry that comes back is not noticed (as in zlink).
                _connected = true;
            }
        }

        _dealer.Connect(endpoint);
        foreach (Registration r in _registrations.Values)
        {
            r.NeedsRegister = true;
        }

        SendOwed();
        PollSetChanged();
        return true;
    });

    /// <summary>The endpoint to advertise: the one given, or the bound one with a <c>*</c> or
    /// <c>0.0.0.0</c> host made <c>127.0.0.1</c> (zlink's rule).</summary>
    private string Advertised(string? advertise)
    {
        if (!string.IsNullOrEmpty(advertise))
        {
            return advertise;
        }

        return Reachable(BoundEndpoint ?? throw new InvalidOperationException("RegisterAsync without an advertised endpoint needs Bind first"));
    }

    /// <summary>A bound endpoint as peers can reach it: a <c>tcp://</c> one with a <c>*</c> or <c>0.0.0.0</c>
    /// host gets <c>127.0.0.1</c> (zlink's rule); any other is returned as it is.</summary>
    internal static string Reachable(string bound)
    {
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
        ZlinkReceiver.CheckText(endpoint, "advertiseEndpoint");
        cancellationToken.ThrowIfCancellationRequested();
        Registration reg = await InvokeAsync(() =>
        {
            Dealer();
            var next = new Registration(service, endpoint, weight);
            if (_registrations.TryGetValue(service, out Registration? old))
            {
                // A new REGISTER of the same service: it replaces the old (the registry updates the
                // entry of the same endpoint; one at another endpoint is withdrawn).
                Fail(old, new ServiceRegistrationException($"REGISTER {service} at {old.Endpoint} was replaced by a later RegisterAsync"));
                if (old.OnRegistry && old.Endpoint != endpoint)
                {
                    Unregister(service, old.Endpoint);
                }

                if (old.Acked && old.Endpoint == endpoint)
                {
                    next.Acked = true;
                    next.State = old.State;
                    next.OnRegistry = old.OnRegistry;
                    next.LostReason = old.LostReason;
                }
            }

            _registrations[service] = next;
            if (!next.Acked)
            {
                SetState(next, RegistrationState.Registering);
            }

            SendOwed();
            _nextHeartbeat = NowMs + _heartbeatMs;
            return next;
        }).ConfigureAwait(false);

        RegisterAckMessage answer;
        try
        {
            answer = await reg.FirstAckTask.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // A cancelled registration is withdrawn: UNREGISTER if the REGISTER went out (now, or
            // when the connection is back), nothing if it never did.
            try
            {
                await InvokeAsync(() => Withdraw(reg, "RegisterAsync was cancelled")).ConfigureAwait(false);
            }
            catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException)
            {
                // Stopped: nothing is renewed, the registry expires what it holds.
            }

            throw;
        }

        if (answer.Status != 0)
        {
            throw new ServiceRegistrationException(answer.Status, answer.Error, $"REGISTER {service} at {endpoint} refused");
        }
    }

    public async Task UpdateWeightAsync(string service, uint weight, CancellationToken cancellationToken)
    {
        Task<RegisterAckMessage> ack = await InvokeAsync(() =>
        {
            Registration r = Registered(service);
            PumpMonitor();
            if (!_connected || r.NeedsRegister || !TrySendMultipart(Dealer(),
                    ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.UpdateWeight, _type, service, r.Endpoint, weight)))
            {
                throw new InvalidOperationException($"UPDATE_WEIGHT {service} not sent: the registry connection is full or not up");
            }

            var done = new TaskCompletionSource<RegisterAckMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
            _awaitingAck.Enqueue(new Awaiting($"UPDATE_WEIGHT {service}", r, done, weight));
            return done.Task;
        }).ConfigureAwait(false);
        RegisterAckMessage answer = await ack.WaitAsync(cancellationToken).ConfigureAwait(false);
        if (answer.Status != 0)
        {
            throw new ServiceRegistrationException(answer.Status, answer.Error, $"UPDATE_WEIGHT {service} refused");
        }
    }

    /// <summary>Withdraws a registration: UNREGISTER now, or when the registry connection is back
    /// if it is down (a registry that restarted meanwhile ignores it; one that did not drops it).</summary>
    public Task<bool> UnregisterAsync(string service) => InvokeAsync(() =>
    {
        Registration r = Registered(service);
        Dealer();
        return Withdraw(r, "UnregisterAsync");
    });

    private bool Withdraw(Registration r, string reason)
    {
        if (!_registrations.TryGetValue(r.Service, out Registration? current) || current != r)
        {
            return false; // already replaced or gone
        }

        _registrations.Remove(r.Service);
        if (r.OnRegistry)
        {
            Unregister(r.Service, r.Endpoint);
        }

        Fail(r, new ServiceRegistrationException($"REGISTER {r.Service} at {r.Endpoint} withdrawn before the registry answered: {reason}"));
        Change(r, RegistrationState.NotRegistered, r.Acked ? RegistrationChangeKind.Unregistered : null, reason);
        return true;
    }

    private static void Fail(Registration r, Exception e)
    {
        Fail(r.FirstAck, e);
        r.FirstAck = null;
    }

    /// <summary>Fails a wait; the failure counts as observed, since its waiter may have gone (a
    /// cancelled RegisterAsync) and nobody else will read it.</summary>
    private static void Fail(TaskCompletionSource<RegisterAckMessage>? waiting, Exception e)
    {
        if (waiting is not null && waiting.TrySetException(e))
        {
            _ = waiting.Task.Exception;
        }
    }

    private void Unregister(string service, string endpoint)
    {
        _pendingUnregister.Add((service, endpoint));
        SendOwed();
    }

    private Registration Registered(string service) =>
        _registrations.TryGetValue(service, out Registration? r)
            ? r
            : throw new InvalidOperationException($"service {service} is not registered by this {(_type == ServiceType.Spot ? "node" : "receiver")}");

    private ZlinkSocket Dealer() => _dealer ?? throw new InvalidOperationException("connect to a registry first (ConnectRegistryAsync)");

    /// <summary>Sends what is owed to the registry while the connection is up: the UNREGISTERs of
    /// withdrawn registrations first, then the REGISTER of every registration not sent on this
    /// connection. What the connection does not take now is tried again next tick.</summary>
    private void SendOwed()
    {
        PumpMonitor();
        if (_dealer is null || !_connected)
        {
            return;
        }

        while (_pendingUnregister.Count > 0)
        {
            var (service, endpoint) = _pendingUnregister[0];
            if (!TrySendMultipart(_dealer, ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Unregister, _type, service, endpoint, null)))
            {
                return;
            }

            _pendingUnregister.RemoveAt(0);
        }

        foreach (Registration r in _registrations.Values)
        {
            if (!r.NeedsRegister)
            {
                continue;
            }

            if (!TrySendMultipart(_dealer, ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Register, _type, r.Service, r.Endpoint, r.Weight)))
            {
                return;
            }

            r.NeedsRegister = false;
            r.OnRegistry = true;
            _awaitingAck.Enqueue(new Awaiting($"REGISTER {r.Service} at {r.Endpoint}", r, null, r.Weight));
        }
    }

    /// <summary>Reads the registry connection's monitor: a drop marks every registration lost, a
    /// connection made (again) sends them all.</summary>
    private void PumpMonitor()
    {
        if (_monitor is null)
        {
            return;
        }

        while (_monitor.TryReceive(out MonitorEvent e))
        {
            if (e.EventType == MonitorEvents.ConnectionReady)
            {
                _connected = true;
            }
            else if (e.EventType == MonitorEvents.Disconnected)
            {
                Lost($"the registry connection dropped ({e.DisconnectReason})");
            }
        }
    }

    /// <summary>The registry connection is gone: what it answered before is read, what it did not
    /// answer is sent again (REGISTER) or failed (UPDATE_WEIGHT), and every registration that
    /// reached it waits to be sent again.</summary>
    private void Lost(string reason)
    {
        if (_dealer is not null)
        {
            ReadAcks();
        }

        _connected = false;
        while (_awaitingAck.TryDequeue(out Awaiting a))
        {
            Fail(a.Done, new ServiceRegistrationException($"{a.What}: {reason} before the registry answered"));
        }

        foreach (Registration r in _registrations.Values)
        {
            if (!r.OnRegistry && !r.NeedsRegister)
            {
                continue;
            }

            bool wasListed = r.State == RegistrationState.Registered;
            r.NeedsRegister = true;
            r.LostReason = reason;
            if (r.OnRegistry)
            {
                Change(r, RegistrationState.Reconnecting, wasListed ? RegistrationChangeKind.Lost : null, reason);
            }
        }
    }

    private void CloseDealer()
    {
        _monitor?.Dispose();
        _monitor = null;
        _dealer?.Dispose();
        _dealer = null;
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

    private void SetState(Registration r, RegistrationState state)
    {
        r.State = state;
        if (state == RegistrationState.NotRegistered)
        {
            _states.TryRemove(r.Service, out _);
        }
        else
        {
            _states[r.Service] = state;
        }
    }

    private void Change(Registration r, RegistrationState state, RegistrationChangeKind? kind, string reason)
    {
        SetState(r, state);
        if (kind is { } k)
        {
            Volatile.Read(ref _changes)?.Writer.TryWrite(new RegistrationChange(r.Service, r.Endpoint, k, reason, DateTimeOffset.UtcNow));
        }
    }

    /// <summary>Sets options of a new registry connection before it connects (TLS).</summary>
    protected virtual void ConfigureDealer(ZlinkSocket dealer)
    {
    }

    /// <summary>Adds the subclass's sockets (after the wake-up socket, index 0).</summary>
    protected abstract void AddOwnPollItems(ZlinkPoller poller);

    /// <summary>Handles what the last poll found on the subclass's sockets.</summary>
    protected abstract void OnOwnPolled(ZlinkPoller poller);

    /// <summary>The subclass's timers, before the heartbeats.</summary>
    protected abstract void OnOwnTick(long nowMs);

    /// <summary>Closes the subclass's sockets, on the worker thread.</summary>
    protected abstract void OnOwnStopped();

    protected sealed override void AddPollItems(ZlinkPoller poller)
    {
        AddOwnPollItems(poller);
        _dealerIndex = -1;
        if (_dealer is not null)
        {
            _dealerIndex = poller.Count;
            poller.Add(_dealer, PollEvents.PollIn);
        }
    }

    protected sealed override void OnPolled(ZlinkPoller poller)
    {
        OnOwnPolled(poller);
        if (_dealer is not null && _dealerIndex > 0 && (poller.GetReturnedEvents(_dealerIndex) & PollEvents.PollIn) != 0)
        {
            ReadAcks();
        }
    }

    private void ReadAcks()
    {
        _frames.Clear();
        while (_dealer!.TryReceiveMultipart(_frames))
        {
            HandleAck();
            _frames.Clear();
        }
    }

    private void HandleAck()
    {
        if (!TryDecode(ServiceProtocol.DecodeRegisterAck, _frames, out RegisterAckMessage ack))
        {
            return;
        }

        if (!_awaitingAck.TryDequeue(out Awaiting waiting))
        {
            Refuse($"REGISTER_ACK (status {ack.Status}) that answers nothing sent");
            return;
        }

        Registration r = waiting.Registration;
        bool current = _registrations.TryGetValue(r.Service, out Registration? now) && now == r;
        if (waiting.Done is { } done)
        {
            // UPDATE_WEIGHT: the weight counts from the registry's yes (a re-registration carries it).
            if (ack.Status == 0 && current)
            {
                r.Weight = waiting.Weight;
            }

            done.TrySetResult(ack);
            return;
        }

        if (!current || r.NeedsRegister)
        {
            return; // withdrawn or replaced since, or to be sent again anyway
        }

        if (ack.Status != 0)
        {
            // A registry that refuses the (re-)registration: it is given up and said so.
            _registrations.Remove(r.Service);
            Change(r, RegistrationState.NotRegistered, r.Acked ? RegistrationChangeKind.Unregistered : null,
                $"the registry refused the registration: status {ack.Status} ({(ack.Error.Length == 0 ? "no reason given" : ack.Error)})");
        }
        else if (r.State != RegistrationState.Registered)
        {
            bool again = r.Acked;
            r.Acked = true;
            Change(r, RegistrationState.Registered, again ? RegistrationChangeKind.Reregistered : RegistrationChangeKind.Registered,
                again ? $"registered again after: {r.LostReason}" : "the registry acknowledged the registration");
        }

        r.FirstAck?.TrySetResult(ack);
        r.FirstAck = null;
    }

    protected sealed override void OnTick(long nowMs)
    {
        OnOwnTick(nowMs);
        if (_dealer is null)
        {
            return;
        }

        SendOwed();
        if (!_connected || _registrations.Count == 0 || nowMs < _nextHeartbeat)
        {
            return;
        }

        foreach (var (service, r) in _registrations)
        {
            if (r.NeedsRegister)
            {
                continue;
            }

            // A registry connection that cannot take it now misses one heartbeat, not the worker's time.
            if (!TrySendMultipart(_dealer, ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Heartbeat, _type, service, r.Endpoint, null)))
            {
                Refuse($"HEARTBEAT {service} not sent: the registry connection is full or not up");
            }
        }

        _nextHeartbeat = nowMs + _heartbeatMs;
    }

    protected sealed override void OnStopped()
    {
        var disposed = new ObjectDisposedException(GetType().DeclaringType?.Name ?? GetType().Name);
        while (_awaitingAck.TryDequeue(out Awaiting a))
        {
            Fail(a.Done, disposed);
        }

        foreach (Registration r in _registrations.Values)
        {
            Fail(r, disposed);
        }

        CloseDealer();
        Volatile.Read(ref _changes)?.Writer.TryComplete();
        OnOwnStopped();
    }

    private readonly record struct Awaiting(string What, Registration Registration, TaskCompletionSource<RegisterAckMessage>? Done, uint Weight);

    /// <summary>One service registered (or being registered) by this worker.</summary>
    private sealed class Registration
    {
        public Registration(string service, string endpoint, uint weight)
        {
            Service = service;
            Endpoint = endpoint;
            Weight = weight;
            FirstAck = new TaskCompletionSource<RegisterAckMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
            FirstAckTask = FirstAck.Task;
        }

        public string Service { get; }

        public string Endpoint { get; }

        public uint Weight;

        public RegistrationState State;

        /// <summary>A REGISTER is owed: not sent on the current connection yet.</summary>
        public bool NeedsRegister = true;

        /// <summary>A REGISTER went out: a registry may hold it (withdrawing it takes an UNREGISTER).</summary>
        public bool OnRegistry;

        /// <summary>A registry acknowledged it once: what follows a loss is a re-registration.</summary>
        public bool Acked;

        public string? LostReason;

        /// <summary>What <see cref="RegisterAsync"/> waits for (null once answered or given up).</summary>
        public TaskCompletionSource<RegisterAckMessage>? FirstAck;

        public Task<RegisterAckMessage> FirstAckTask { get; }
    }
}
