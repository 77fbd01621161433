// The dotnet stack's client over tls, ws and wss: the same LoadPlan, counters and pass rules as the
// tcp client (DotnetClient), but each connection is a Stream over a System.Net.Sockets socket
// (tls: an SslStream; ws: a System.Net.WebSockets WebSocket after an HTTP upgrade of our own, seen
// as a byte stream by WebSocketByteStream; wss: the WebSocket over an SslStream), driven by two
// async loops of its own: a reader that frames the echoes (the library's PacketReassembler, as the
// tcp client) and counts them, and a writer that tops the connection up. Neither SslStream nor
// WebSocket has a socket-event form, so this path does not follow the tcp client's shape (no task
// per connection, nothing allocated per packet); it is the plain robust one, for correctness and
// exact counts first.
//
//   connect: at most --connect-concurrency attempts at once; each attempt (TCP connect plus the
//            TLS handshake and/or the WebSocket upgrade) within --connect-timeout, retried
//            --connect-retries times --connect-retry-delay-ms apart; every failed attempt counted by
//            errno (a refused certificate, a failed handshake or a refused upgrade: EPROTO, 71).
//   verify:  (tls, wss) the server's chain against --tls-ca only (custom root trust, no system
//            store, no revocation check) and --host (a name, or an address checked against the
//            certificate's IP names) against the certificate. No client certificate is offered.
//   ws:      GET / with Host --host:--port; every write is one binary frame (masked, as a client's
//            must be); the echoes' frames are read as one byte stream, boundaries ignored.
//   writer:  woken (Kick) by a phase change, by echoes, or in an open-model run by the control
//            thread's pacer; it sends what the closed loop (inflight minus outstanding, at most
//            --send-batch) or the schedule (owed, within the inflight cap) asks, one WriteAsync
//            per frame. Outstanding grows before the bytes leave, as on tcp.
//   control: one thread follows the phases (kicks every connection when a closed-loop sending
//            phase starts) and, open model, walks the schedule (ShardPacer) and kicks what fell due.
//
// Limits: one control thread (shard_count=1), a receive buffer per connection, the allocation
// count is the whole process's during the measured phase (the async path allocates per packet
// and per record), and in an open-model run only the inflight cap marks packets late (a slow
// WriteAsync does not). --shards, --hwm and --io-threads have no meaning here.
using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using HdrHistogram;
using NetZlink.Engine;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.WebSockets;

namespace NetZlink.Stress.DotnetStack;

/// <summary>Runs a <see cref="LoadPlan"/> over <see cref="SslStream"/> and/or <see cref="WebSocket"/> connections.</summary>
internal sealed class DotnetStreamClient : ILoadDriver, IDueSink
{
    /// <summary>EPROTO: what a failed handshake, a refused server certificate or a refused upgrade counts as.</summary>
    public const int HandshakeErrno = 71;

    private const int StripeCount = 16;
    private const int IdleWaitMs = 5;

    private readonly ScenarioSettings _settings;
    private readonly IPEndPoint _endpoint;
    private readonly X509Certificate2Collection? _trusted;
    private readonly bool _webSocket;
    private readonly string _hostHeader;
    private readonly StreamConnection[] _connections;
    private readonly LatencyStripe[] _stripes;
    private readonly byte[] _template;
    private readonly byte[] _expectedBody;
    private readonly PacketReassembler _reassembler;
    private readonly SemaphoreSlim _connectSlots;
    private readonly CancellationTokenSource _stop = new();
    private readonly TaskCompletionSource _resolved = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly AutoResetEvent _wake = new(initialState: false);
    private readonly ErrnoCounts _errors = new();
    private readonly ShardPacer? _pacer;
    private readonly Thread _thread;
    private readonly Task[] _tasks;
    private volatile bool _stopRequested;
    private int _unresolved;
    private readonly ConnectionTallies _tallies = new();
    private int _observedPhase;
    private int _stopped;
    private Exception? _fault;
    private long _allocatedAtMeasure = -1;
    private long _allocatedDuringMeasure;

    private DotnetStreamClient(ScenarioSettings settings, int ccu, LoadPlan plan, IPEndPoint endpoint, X509Certificate2Collection? trusted)
    {
        _settings = settings;
        Plan = plan;
        _endpoint = endpoint;
        _trusted = trusted;
        _webSocket = Tls.TlsEngineSettings.IsWebSocket(settings);
        string host = settings.Host.Contains(':', StringComparison.Ordinal) && !settings.Host.StartsWith('[') ? $"[{settings.Host}]" : settings.Host;
        _hostHeader = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{host}:{settings.Port}");
        _connections = new StreamConnection[ccu];
        for (int i = 0; i < ccu; i++)
        {
            _connections[i] = new StreamConnection(i);
        }

        _stripes = new LatencyStripe[Math.Min(StripeCount, ccu)];
        for (int i = 0; i < _stripes.Length; i++)
        {
            _stripes[i] = new LatencyStripe();
        }

        int perFrame = Math.Max(1, plan.SendBatch);
        _template = new byte[perFrame * plan.PacketLength];
        _expectedBody = plan.NewExpectedBody();

        for (int p = 0; p < perFrame; p++)
        {
            Span<byte> packet = _template.AsSpan(p * plan.PacketLength, plan.PacketLength);
            BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)plan.Size);
            _expectedBody.AsSpan(9).CopyTo(packet[(4 + 9)..]);
        }

        _reassembler = new PacketReassembler(
            new LengthPrefixFramer(maxBody: plan.Size, minBody: plan.Size), plan.PacketLength, ArrayPool<byte>.Create(plan.PacketLength, Math.Max(16, ccu)));
        _connectSlots = new SemaphoreSlim(Math.Max(1, settings.ConnectConcurrency));
        _pacer = plan.IsOpen ? new ShardPacer(0, 1, ccu) : null;
        _unresolved = ccu;
        _tasks = new Task[ccu];
        _thread = new Thread(Run) { IsBackground = true, Name = $"dotnet-{settings.Transport}-client" };
    }

    public LoadPlan Plan { get; }

    /// <summary>One control thread; the connections' loops run on the thread pool.</summary>
    public int ShardCount => 1;

    public Task ConnectsResolved => _resolved.Task;

    public Exception? Fault => Volatile.Read(ref _fault);

    public bool Stopped => Volatile.Read(ref _stopped) != 0;

    /// <summary>Reads --tls-ca (tls, wss), resolves --host and starts every connection connecting.</summary>
    /// <exception cref="InvalidOperationException">No --tls-ca over tls or wss, or the process may not open <paramref name="ccu"/> more sockets.</exception>
    /// <exception cref="ArgumentException">--host does not resolve, or --tls-ca holds no PEM certificate.</exception>
    public static DotnetStreamClient Start(ScenarioSettings settings, int ccu, LoadPlan plan)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentOutOfRangeException.ThrowIfLessThan(ccu, 1);
        X509Certificate2Collection? trusted = Tls.TlsEngineSettings.UsesTls(settings)
            ? LoadCa(settings.TlsCaFile ?? throw new InvalidOperationException($"the dotnet client over {settings.Transport} needs --tls-ca"))
            : null;
        Platform.DescriptorLimit.Ensure(ccu, reserved: 64);
        IPEndPoint endpoint = EndpointResolver.ForClient(settings.Host, settings.Port);
        var client = new DotnetStreamClient(settings, ccu, plan, endpoint, trusted);
        client._thread.Start();
        for (int i = 0; i < ccu; i++)
        {
            StreamConnection c = client._connections[i];
            client._tasks[i] = Task.Run(() => client.RunConnectionAsync(c));
        }

        plan.PhaseChanged = client.Wake;
        return client;
    }

    /// <summary>The certificates of a PEM file, the only roots the client trusts.</summary>
    /// <exception cref="ArgumentException">The file holds no PEM certificate.</exception>
    internal static X509Certificate2Collection LoadCa(string path)
    {
        var trusted = new X509Certificate2Collection();
        try
        {
            trusted.ImportFromPemFile(path);
        }
        catch (System.Security.Cryptography.CryptographicException e)
        {
            throw new ArgumentException($"--tls-ca {path}: not a readable PEM certificate file: {e.Message}", e);
        }

        return trusted.Count > 0 ? trusted : throw new ArgumentException($"--tls-ca {path}: the file holds no PEM certificate");
    }

    public LoadTotals Totals()
    {
        var sum = new LoadTotalsSum();
        OpenSchedule? owing = Plan.Phase == LoadPhase.Drain ? Plan.Schedule : null;
        foreach (StreamConnection c in _connections)
        {
            bool open = owing is not null && Volatile.Read(ref c.State) == StreamConnection.Open;
            sum.Add(ref c.Counters, owing, c.Index, open);
        }

        // After the connections: a close clears Outstanding before it counts what was lost.
        sum.Add(_tallies);

        return sum.ToTotals();
    }

    public bool HaveAllObserved(LoadPhase phase) => (LoadPhase)Volatile.Read(ref _observedPhase) == phase;

    public double P99UsEstimate()
    {
        double p99 = 0;
        foreach (LatencyStripe stripe in _stripes)
        {
            using (stripe.Gate.EnterScope())
            {
                p99 = Math.Max(p99, LatencyHistograms.PercentileUs(stripe.Histogram, 99));
            }
        }

        return p99;
    }

    public HistogramBase MergedLatency()
    {
        LongHistogram merged = LatencyHistograms.Create();
        foreach (LatencyStripe stripe in _stripes)
        {
            using (stripe.Gate.EnterScope())
            {
                merged.Add(stripe.Histogram);
            }
        }

        return merged;
    }

    public IReadOnlyDictionary<int, long> ErrorsByErrno() => _errors.Snapshot();

    /// <summary>The whole process's allocations during the measured phase (see the file's note).</summary>
    public long AllocatedDuringMeasure() => Interlocked.Read(ref _allocatedDuringMeasure);

    public void Stop(TimeSpan timeout)
    {
        if (Interlocked.Exchange(ref _stopped, 1) != 0)
        {
            return;
        }

        DateTime deadline = DateTime.UtcNow + timeout;
        _stopRequested = true;
        _stop.Cancel();
        _wake.Set();
        _thread.Join(timeout);
        foreach (StreamConnection c in _connections)
        {
            Close(c, errno: 0);
        }

        TimeSpan left = deadline - DateTime.UtcNow;
        try
        {
            Task.WaitAll(_tasks, left > TimeSpan.Zero ? left : TimeSpan.Zero);
        }
        catch (AggregateException)
        {
            // Each loop reports its own failures; what is left here is cancellation.
        }

        _resolved.TrySetResult();
    }

    public void Dispose()
    {
        Stop(TimeSpan.FromSeconds(10));
        if (_tasks.All(t => t is not null && t.IsCompleted))
        {
            foreach (StreamConnection c in _connections)
            {
                c.Dispose();
            }

            _connectSlots.Dispose();
            _stop.Dispose();
        }

        if (!_thread.IsAlive)
        {
            _wake.Dispose();
        }

        foreach (X509Certificate2 certificate in _trusted ?? [])
        {
            certificate.Dispose();
        }
    }

    /// <summary>Open model, on the control thread: a packet of connection <paramref name="slot"/> fell due.</summary>
    public void OnDue(int slot) => Kick(_connections[slot]);

    private void Wake()
    {
        try
        {
            _wake.Set();
        }
        catch (ObjectDisposedException)
        {
            // A phase change after Dispose: nothing listens any more.
        }
    }

    private void Run()
    {
        try
        {
            LoadPhase last = LoadPhase.Connect;
            while (!_stopRequested)
            {
                LoadPhase phase = Plan.Phase;
                if (phase != last)
                {
                    EnterPhase(phase, last);
                    last = phase;
                }

                long nextDue = long.MaxValue;
                if (_pacer is not null && Plan.SendsIn(phase))
                {
                    if (Plan.Schedule is { } schedule && !ReferenceEquals(schedule, _pacer.Schedule))
                    {
                        _pacer.Begin(schedule);
                    }

                    nextDue = _pacer.Advance(LoadPlan.NowNanoseconds(), this);
                }

                long untilDueNs = nextDue - LoadPlan.NowNanoseconds();
                if (untilDueNs < IdleWaitMs * 1_000_000L)
                {
                    DotnetClientShard.SleepUntil(nextDue);
                }
                else
                {
                    _wake.WaitOne(IdleWaitMs);
                }
            }
        }
#pragma warning disable CA1031 // the client reports its failure to the runner instead of tearing the process down
        catch (Exception e)
#pragma warning restore CA1031
        {
            ReportFault(e);
        }
    }

    private void EnterPhase(LoadPhase phase, LoadPhase last)
    {
        if (phase == LoadPhase.Measure)
        {
            Interlocked.Exchange(ref _allocatedAtMeasure, GC.GetTotalAllocatedBytes(precise: false));
        }
        else if (last == LoadPhase.Measure)
        {
            Interlocked.Exchange(ref _allocatedDuringMeasure, GC.GetTotalAllocatedBytes(precise: false) - Interlocked.Read(ref _allocatedAtMeasure));
        }

        if (_pacer is null && LoadPlan.IsSending(phase))
        {
            foreach (StreamConnection c in _connections)
            {
                Kick(c);
            }
        }

        Volatile.Write(ref _observedPhase, (int)phase);
    }

    private void ReportFault(Exception e) => Interlocked.CompareExchange(ref _fault, e, null);

    private void CountError(int errno)
        => _errors.Add(errno);

    private void Resolved()
    {
        if (Interlocked.Decrement(ref _unresolved) == 0)
        {
            _resolved.TrySetResult();
        }
    }

    private async Task RunConnectionAsync(StreamConnection c)
    {
        try
        {
            if (!await ConnectAsync(c).ConfigureAwait(false))
            {
                Resolved();
                return;
            }

            Volatile.Write(ref c.State, StreamConnection.Open);
            Interlocked.Increment(ref _tallies.Connected);
            Plan.ColdStart.Connected();
            Resolved();
            if (_stopRequested)
            {
                Close(c, errno: 0);
            }

            Task reading = ReadLoopAsync(c);
            Task writing = WriteLoopAsync(c);
            Kick(c);
            await Task.WhenAll(reading, writing).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // a connection's loop must not throw into the pool: the runner hears of it instead
        catch (Exception e)
#pragma warning restore CA1031
        {
            ReportFault(e);
            Close(c, errno: 0);
        }
    }

    /// <summary>Connects and completes the handshake, with retries; false when the connection failed for good (or the client stopped).</summary>
    private async Task<bool> ConnectAsync(StreamConnection c)
    {
        CancellationToken stop = _stop.Token;
        for (int attempt = 0; ; attempt++)
        {
            if (attempt > 0)
            {
                await Task.Delay(Math.Max(0, _settings.ConnectRetryDelayMs), stop).ConfigureAwait(false);
            }

            int errno;
            bool timedOut = false;
            await _connectSlots.WaitAsync(stop).ConfigureAwait(false);
            try
            {
                using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stop);
                deadline.CancelAfter(TimeSpan.FromSeconds(_settings.ConnectTimeoutSeconds));
                var socket = new Socket(_endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
                Stream? stream = null;
                try
                {
                    DotnetClientShard.ConfigureClientSocket(socket, _settings);
                    await socket.ConnectAsync(_endpoint, deadline.Token).ConfigureAwait(false);
                    stream = new NetworkStream(socket, ownsSocket: true);
                    if (_trusted is not null)
                    {
                        var tls = new SslStream(stream, leaveInnerStreamOpen: false);
                        stream = tls;
                        await tls.AuthenticateAsClientAsync(ClientOptions(_trusted), deadline.Token).ConfigureAwait(false);
                    }

                    if (_webSocket)
                    {
                        WebSocket ws = await WebSocketHandshake.ConnectAsync(stream, _hostHeader, WebSocketHandshake.DefaultPath, deadline.Token).ConfigureAwait(false);
                        stream = new WebSocketByteStream(ws);
                    }

                    c.Socket = socket;
                    c.Stream = stream;
                    return true;
                }
                catch (OperationCanceledException) when (!stop.IsCancellationRequested)
                {
                    (errno, timedOut) = (SocketErrno.TimedOut, true);
                }
                catch (SocketException e) when (!stop.IsCancellationRequested)
                {
                    errno = SocketErrno.Of(e.SocketErrorCode);
                }
                catch (Exception e) when (e is AuthenticationException or WebSocketException && !stop.IsCancellationRequested)
                {
                    errno = HandshakeErrno;
                }
                catch (IOException e) when (!stop.IsCancellationRequested)
                {
                    // The server closed or reset the connection during the handshake.
                    errno = e.InnerException is SocketException s ? SocketErrno.Of(s.SocketErrorCode) : HandshakeErrno;
                }
                catch (Exception) when (stop.IsCancellationRequested)
                {
                    stream?.Dispose();
                    socket.Dispose();
                    return false;
                }

                stream?.Dispose();
                socket.Dispose();
            }
            finally
            {
                _connectSlots.Release();
            }

            CountError(errno);
            if (attempt >= _settings.ConnectRetries)
            {
                _tallies.CountConnectFailure(timedOut);
                return false;
            }
        }
    }

    private SslClientAuthenticationOptions ClientOptions(X509Certificate2Collection trusted)
    {
        var policy = new X509ChainPolicy
        {
            TrustMode = X509ChainTrustMode.CustomRootTrust,
            RevocationMode = X509RevocationMode.NoCheck,
        };
        policy.CustomTrustStore.AddRange(trusted);
        string host = _settings.Host.Trim('[', ']');
        return new SslClientAuthenticationOptions
        {
            TargetHost = host,
            CertificateChainPolicy = policy,
            // SslStream's own checks (the chain against the policy, a name), then the host again by
            // hand (an address against the certificate's IP names), whatever the platform's own name check does.
            RemoteCertificateValidationCallback = (_, certificate, _, errors) =>
                errors == SslPolicyErrors.None && certificate is X509Certificate2 server && server.MatchesHostname(host, allowWildcards: true, allowCommonName: false),
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            EnabledSslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
        };
    }

    /// <summary>Asks the connection's writer for a top-up.</summary>
    private static void Kick(StreamConnection c)
    {
        if (Interlocked.Exchange(ref c.Wanted, 1) == 0)
        {
            c.Signal.Release();
        }
    }

    /// <summary>
    /// Ends an open connection; false when it was not open. Whatever it had outstanding is lost;
    /// <paramref name="byPeer"/>: the server closed or reset it.
    /// </summary>
    private bool Close(StreamConnection c, int errno, bool byPeer = false)
    {
        if (Interlocked.CompareExchange(ref c.State, StreamConnection.Closed, StreamConnection.Open) != StreamConnection.Open)
        {
            return false;
        }

        long outstanding = Interlocked.Exchange(ref c.Counters.Outstanding, 0);
        _tallies.CountClose(outstanding, byPeer, _stopRequested);
        if (errno != 0 && !_stopRequested)
        {
            CountError(errno);
        }

        c.Stream?.Dispose();
        c.Socket?.Dispose();
        Kick(c);
        return true;
    }

    private async Task ReadLoopAsync(StreamConnection c)
    {
        byte[] buffer = new byte[Math.Max(16 * 1024, 2 * Plan.PacketLength)];
        try
        {
            while (true)
            {
                int read = await c.Stream!.ReadAsync(buffer, _stop.Token).ConfigureAwait(false);
                if (read == 0)
                {
                    Close(c, errno: 0, byPeer: true);
                    return;
                }

                if (!OnRead(c, buffer.AsSpan(0, read)))
                {
                    return;
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            int errno = (e as SocketException ?? e.InnerException as SocketException) is { } s ? SocketErrno.Of(s.SocketErrorCode) : 0;
            Close(c, errno, byPeer: errno != 0);
        }
        finally
        {
            // Only this loop feeds the partial packet, so only it gives the buffer back.
            _reassembler.Release(ref c.Partial);
        }
    }

    /// <summary>Frames and counts what one read brought; false when the connection was closed for a bad echo.</summary>
    private bool OnRead(StreamConnection c, ReadOnlySpan<byte> data)
    {
        LoadPhase phase = Plan.Phase;
        long measuredBefore = c.Counters.ReceivedMeasured;
        var sink = new EchoSink(this, c, phase);
        ReassemblyResult result = _reassembler.Feed(ref c.Partial, data, ref sink);
        if (result == ReassemblyResult.ProtocolError)
        {
            c.Counters.ProtocolErrors++;
        }

        if (Plan.IsOpen && c.Counters.ReceivedMeasured != measuredBefore)
        {
            Volatile.Write(ref c.Counters.LastMeasuredEchoNs, LoadPlan.NowNanoseconds());
        }

        c.Counters.SettleEchoes(sink.Echoes, shared: true);

        if (result != ReassemblyResult.Consumed)
        {
            Close(c, errno: 0);
            return false;
        }

        if (sink.Echoes > 0 && Plan.SendsIn(phase))
        {
            Kick(c);
        }

        return true;
    }

    private bool OnEcho(StreamConnection c, ReadOnlySpan<byte> packet, LoadPhase phase)
    {
        EchoCount count = c.Counters.CountEcho(Plan, _expectedBody, packet);
        int rate = Plan.LatencySampleRate;
        if (count == EchoCount.Measured && rate > 0 && phase != LoadPhase.Done && ++c.MeasuredSeen % rate == 0)
        {
            long roundTrip = LoadPlan.NowNanoseconds() - EchoConnectionCounters.SentAtNs(packet);
            LatencyStripe stripe = _stripes[c.Index % _stripes.Length];
            using (stripe.Gate.EnterScope())
            {
                LatencyHistograms.Record(stripe.Histogram, roundTrip);
            }
        }

        return count != EchoCount.Bad;
    }

    private async Task WriteLoopAsync(StreamConnection c)
    {
        int perFrame = Math.Max(1, Plan.SendBatch);
        byte[] frame = ArrayPool<byte>.Shared.Rent(perFrame * Plan.PacketLength);
        try
        {
            while (true)
            {
                await c.Signal.WaitAsync(_stop.Token).ConfigureAwait(false);
                Interlocked.Exchange(ref c.Wanted, 0);
                while (true)
                {
                    if (Volatile.Read(ref c.State) != StreamConnection.Open)
                    {
                        return;
                    }

                    int length = NextFrame(c, frame, perFrame);
                    if (length == 0)
                    {
                        break;
                    }

                    await c.Stream!.WriteAsync(frame.AsMemory(0, length), _stop.Token).ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            int errno = (e as SocketException ?? e.InnerException as SocketException) is { } s ? SocketErrno.Of(s.SocketErrorCode) : 0;
            Close(c, errno, byPeer: errno != 0);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(frame);
        }
    }

    /// <summary>Builds the next frame into <paramref name="frame"/> and counts it as sent; its length, 0 when nothing is to be sent.</summary>
    private int NextFrame(StreamConnection c, byte[] frame, int perFrame)
    {
        LoadPhase phase = Plan.Phase;
        if (!Plan.SendsIn(phase))
        {
            return 0;
        }

        OpenSchedule? schedule = Plan.Schedule;
        int want = c.Counters.Wants(Plan, schedule, c.Index, perFrame, out bool late);
        if (want <= 0)
        {
            return 0;
        }

        Interlocked.Add(ref c.Counters.Outstanding, want);
        if (Volatile.Read(ref c.State) != StreamConnection.Open)
        {
            // Closed meanwhile: Close may have cleared Outstanding before this add, so clear it again.
            Interlocked.Exchange(ref c.Counters.Outstanding, 0);
            return 0;
        }

        bool measured = Plan.IsMeasured(phase);
        int length = want * Plan.PacketLength;
        _template.AsSpan(0, length).CopyTo(frame);
        long now = LoadPlan.NowNanoseconds();
        for (int p = 0; p < want; p++)
        {
            Span<byte> body = frame.AsSpan((p * Plan.PacketLength) + 4, 9);
            body[0] = measured ? (byte)1 : (byte)0;
            BinaryPrimitives.WriteInt64LittleEndian(body[1..], schedule is null ? now : schedule.DueAtNs(c.Index, c.Counters.ScheduledSent + p));
        }

        c.Counters.CountSent(want, measured, scheduled: schedule is not null, late);
        return length;
    }

    /// <summary>Where the reassembler hands each whole echo of one connection.</summary>
    private struct EchoSink(DotnetStreamClient client, StreamConnection c, LoadPhase phase) : IPacketSink
    {
        public int Echoes;

        public bool OnPacket(ReadOnlySpan<byte> packet)
        {
            if (!client.OnEcho(c, packet, phase))
            {
                return false;
            }

            Echoes++;
            return true;
        }
    }

    /// <summary>A share of the sampled round trips, behind its own lock.</summary>
    private sealed class LatencyStripe
    {
        public Lock Gate { get; } = new();

        public LongHistogram Histogram { get; } = LatencyHistograms.Create();
    }

    /// <summary>One connection's stream and counters. Receive fields: the reader's; send fields: the writer's.</summary>
    private sealed class StreamConnection(int index) : IDisposable
    {
        public const int Connecting = 0;
        public const int Open = 1;
        public const int Closed = 2;

        public readonly int Index = index;
        public readonly SemaphoreSlim Signal = new(0);
        public int State;
        public int Wanted;
        public Socket? Socket;
        public Stream? Stream;
        public PartialPacket Partial;

        /// <summary>Send fields: the writer's; receive fields: the reader's; Outstanding: Interlocked.</summary>
        public EchoConnectionCounters Counters;

        /// <summary>The reader's: measured echoes seen, for the latency sample rate.</summary>
        public long MeasuredSeen;

        public void Dispose() => Signal.Dispose();
    }
}
