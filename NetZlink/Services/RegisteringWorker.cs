namespace NetZlink.Services;

/// <summary>
/// A service worker that registers itself with a registry: a gateway receiver or a SPOT node. It
/// owns the DEALER to the registry (with the same routing id as what it registers, which the
/// registry lists), sends REGISTER, UPDATE_WEIGHT and UNREGISTER, matches REGISTER_ACKs to what
/// waits for them, and renews every registration with a HEARTBEAT each interval.
/// </summary>
internal abstract class RegisteringWorker : ServiceWorker
{
    private readonly ServiceType _type;
    private readonly long _heartbeatMs;
    private readonly Dictionary<string, Registration> _registrations = new(StringComparer.Ordinal);
    private readonly Queue<(string What, TaskCompletionSource<RegisterAckMessage> Done)> _awaitingAck = new();
    private readonly List<byte[]> _frames = [];
    private ZlinkSocket? _dealer;
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

    public Task<bool> ConnectRegistryAsync(string endpoint) => InvokeAsync(() =>
    {
        _dealer?.Dispose();
        _dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
        _dealer.SetOption(SocketOption.RoutingId, RoutingIdBytes);
        ConfigureDealer(_dealer);
        _dealer.Connect(endpoint);
        FailAwaiting(new ServiceRegistrationException($"the registry connection was replaced by one to {endpoint}"));
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
        Task<RegisterAckMessage> ack = await InvokeAsync(() =>
        {
            Task<RegisterAckMessage> t = SendExpectingAck($"REGISTER {service} at {endpoint}",
                ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Register, _type, service, endpoint, weight));
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

    public async Task UpdateWeightAsync(string service, uint weight, CancellationToken cancellationToken)
    {
        Task<RegisterAckMessage> ack = await InvokeAsync(() =>
        {
            Registration r = Registered(service);
            r.Weight = weight;
            return SendExpectingAck($"UPDATE_WEIGHT {service}",
                ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.UpdateWeight, _type, service, r.Endpoint, weight));
        }).ConfigureAwait(false);
        RegisterAckMessage answer = await ack.WaitAsync(cancellationToken).ConfigureAwait(false);
        if (answer.Status != 0)
        {
            throw new ServiceRegistrationException(answer.Status, answer.Error, $"UPDATE_WEIGHT {service} refused");
        }
    }

    public Task<bool> UnregisterAsync(string service) => InvokeAsync(() =>
    {
        Registration r = Registered(service);
        if (!TrySendMultipart(Dealer(), ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Unregister, _type, service, r.Endpoint, null)))
        {
            throw new InvalidOperationException($"UNREGISTER {service} not sent: the registry connection is full or not up");
        }

        _registrations.Remove(service);
        return true;
    });

    private Registration Registered(string service) =>
        _registrations.TryGetValue(service, out Registration? r)
            ? r
            : throw new InvalidOperationException($"service {service} is not registered by this {(_type == ServiceType.Spot ? "node" : "receiver")}");

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
            _frames.Clear();
            while (_dealer.TryReceiveMultipart(_frames))
            {
                HandleAck();
                _frames.Clear();
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

    protected sealed override void OnTick(long nowMs)
    {
        OnOwnTick(nowMs);
        if (_dealer is null || _registrations.Count == 0 || nowMs < _nextHeartbeat)
        {
            return;
        }

        foreach (var (service, r) in _registrations)
        {
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
        FailAwaiting(new ObjectDisposedException(GetType().DeclaringType?.Name ?? GetType().Name));
        _dealer?.Dispose();
        OnOwnStopped();
    }

    private sealed class Registration
    {
        public required string Endpoint;
        public uint Weight;
    }
}
