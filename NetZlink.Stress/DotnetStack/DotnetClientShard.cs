// One shard of the dotnet client: a share of the connections (global index i belongs to shard
// i % shards), their state in a struct array, and one named thread for what no socket event
// drives: starting connect attempts within the shard's share of --connect-concurrency, timing
// them out, retrying them, and filling every connection when a sending phase starts. In an
// open-model run (--rate) that thread also walks the schedule (ShardPacer) and kicks each
// connection whose packets fell due, sleeping until the next one is due.
//
// Packets move on the runtime's socket engine threads (SocketAsyncEngine), through one reusable
// SocketAsyncEventArgs per direction per connection: no task, thread or timer per connection.
// Completions of one shard's connections may run on several of those threads at once, so the
// per-connection fields follow the ownership rules written in DotnetConnection, the shard's own
// counters are Interlocked (they move only on connects and closes), and latency goes to
// per-thread histograms (ClientThreadState).
//
// System.IO.Pipelines is not used here: a Pipe per connection needs a reader loop (a task or a
// continuation) per connection and a buffer segment per connection between reads, which is what
// this shape avoids; the bytes are framed straight out of one per-thread receive buffer.
using NetZlink.Engine;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

/// <summary>A group of client connections with its own thread for connects and phase changes.</summary>
internal sealed partial class DotnetClientShard : IDisposable, IDueSink
{
    private const int IdleWaitMs = 5;
    // Open model, with nothing due: how long the shard thread naps, so that it starts a schedule
    // within a millisecond of the runner's phase change.
    private const int PhasePollMs = 1;

    private readonly DotnetClient _client;
    private readonly ScenarioSettings _settings;
    private readonly LoadPlan _plan;
    private readonly IPEndPoint _endpoint;
    private readonly DotnetConnection[] _connections;
    private readonly ClientSocketEventArgs[] _receiveArgs;
    private readonly ClientSocketEventArgs?[] _sendArgs;
    private readonly PacketReassembler _reassembler;
    private readonly byte[] _expectedBody;
    private readonly AutoResetEvent _wake = new(initialState: false);
    private readonly Thread _thread;
    private readonly int _shardCount;
    private readonly ShardPacer? _pacer;
    private ClientThreadState? _shardThreadState;
    private volatile bool _stopRequested;
    private LoadPhase _lastPhase = LoadPhase.Connect;

    // Interlocked: they move on connect results and closes only.
    private readonly ConnectionTallies _tallies = new();
    private int _observedPhase;

    public DotnetClientShard(DotnetClient client, int index, int shardCount, int connectionCount, ScenarioSettings settings, LoadPlan plan, IPEndPoint endpoint, int attemptLimit)
    {
        _client = client;
        Index = index;
        _shardCount = shardCount;
        _pacer = plan.IsOpen ? new ShardPacer(index, shardCount, connectionCount) : null;
        _settings = settings;
        _plan = plan;
        _endpoint = endpoint;
        _attemptLimit = Math.Max(1, attemptLimit);
        _connections = new DotnetConnection[connectionCount];
        _receiveArgs = new ClientSocketEventArgs[connectionCount];
        _sendArgs = new ClientSocketEventArgs?[connectionCount];
        for (int slot = 0; slot < connectionCount; slot++)
        {
            _receiveArgs[slot] = new ClientSocketEventArgs(this, slot, sends: false);
        }

        _reassembler = new PacketReassembler(
            new LengthPrefixFramer(maxBody: plan.Size, minBody: plan.Size),
            plan.PacketLength,
            System.Buffers.ArrayPool<byte>.Create(plan.PacketLength, Math.Max(16, connectionCount)));
        _expectedBody = plan.NewExpectedBody();

        _unresolved = connectionCount;
        _waiting = new List<int>(Math.Min(connectionCount, 4 * _attemptLimit));
        _thread = new Thread(Run) { IsBackground = true, Name = $"dotnet-client-shard-{index}" };
    }

    public int Index { get; }

    /// <summary>The last phase the shard thread acted on.</summary>
    public LoadPhase ObservedPhase => (LoadPhase)Volatile.Read(ref _observedPhase);

    public bool ThreadExited => !_thread.IsAlive;

    public void Start() => _thread.Start();

    /// <summary>Adds this shard's tallies and connections to <paramref name="sum"/>.</summary>
    public void AddTotals(ref LoadTotalsSum sum)
    {
        // Open model, in the drain: what each open connection still owes of the measured schedule.
        OpenSchedule? owing = _plan.Phase == LoadPhase.Drain ? _plan.Schedule : null;
        for (int slot = 0; slot < _connections.Length; slot++)
        {
            ref DotnetConnection c = ref _connections[slot];
            bool open = owing is not null && Volatile.Read(ref c.State) == (int)DotnetConnectionState.Connected;
            sum.Add(ref c.Counters, owing, ConnectionIndex(slot), open);
        }

        // After the connections: a close clears Outstanding before it counts what was lost.
        sum.Add(_tallies);
    }

    /// <summary>Stops the thread (waiting up to <paramref name="timeout"/>) and closes every socket.</summary>
    public bool Stop(TimeSpan timeout)
    {
        _stopRequested = true;
        _wake.Set();
        bool exited = _thread.ThreadState == System.Threading.ThreadState.Unstarted || _thread.Join(timeout);
        for (int slot = 0; slot < _connections.Length; slot++)
        {
            ref DotnetConnection c = ref _connections[slot];
            if (!Close(slot, errno: 0))
            {
                // Not connected: an attempt may be in flight; closing its socket ends it.
                Volatile.Read(ref c.Socket)?.Dispose();
            }
        }

        return exited;
    }

    /// <summary>The global connection index of <paramref name="slot"/> (connection i belongs to shard i % shards).</summary>
    private int ConnectionIndex(int slot) => (slot * _shardCount) + Index;

    /// <summary>Open model, on the shard thread: a packet of <paramref name="slot"/> fell due.</summary>
    public void OnDue(int slot)
    {
        if (Volatile.Read(ref _connections[slot].State) == (int)DotnetConnectionState.Connected)
        {
            Kick(slot, _shardThreadState!);
        }
    }

    /// <summary>Wakes the shard thread (a connect settled, the phase changed); a no-op once the shard is disposed.</summary>
    internal void Wake()
    {
        try
        {
            _wake.Set();
        }
        catch (ObjectDisposedException)
        {
            // A late completion of an attempt aborted by Stop.
        }
    }

    /// <summary>Releases the wake-up event; call after <see cref="Stop"/>.</summary>
    public void Dispose() => _wake.Dispose();

    private void Run()
    {
        try
        {
            ClientThreadState state = ClientThreadState.For(_client);
            _shardThreadState = state;
            while (!_stopRequested)
            {
                LoadPhase phase = _plan.Phase;
                int waitMs;
                long nextDue = long.MaxValue;
                using (state.Enter(phase))
                {
                    waitMs = AdvanceConnects(Stopwatch.GetTimestamp());
                    if (phase != _lastPhase)
                    {
                        EnterPhase(phase, state);
                    }

                    if (_pacer is not null && phase != LoadPhase.Done)
                    {
                        nextDue = PaceOpen(phase);
                        if (nextDue == long.MaxValue)
                        {
                            waitMs = Math.Min(waitMs, PhasePollMs);
                        }
                    }
                }

                // The next due packet, to the microsecond (a wait handle counts whole milliseconds);
                // connects and stops are looked at again within waitMs either way.
                if (nextDue - LoadPlan.NowNanoseconds() < waitMs * 1_000_000L)
                {
                    SleepUntil(nextDue);
                }
                else
                {
                    _wake.WaitOne(waitMs);
                }
            }
        }
#pragma warning disable CA1031 // the shard reports its failure to the runner instead of tearing the process down
        catch (Exception e)
#pragma warning restore CA1031
        {
            _client.ReportFault(e);
        }
    }

    /// <summary>Open model: kicks the connections with packets due; returns when the next is due (ns), or long.MaxValue.</summary>
    private long PaceOpen(LoadPhase phase)
    {
        long now = LoadPlan.NowNanoseconds();
        long nextDue = long.MaxValue;
        if (_plan.SendsIn(phase))
        {
            // A new schedule (a shard that slept through the measured phase meets it at the drain).
            if (_plan.Schedule is { } schedule && !ReferenceEquals(schedule, _pacer!.Schedule))
            {
                _pacer.Begin(schedule);
            }

            nextDue = _pacer!.Advance(now, this);
        }

        return nextDue;
    }

    /// <summary>Sleeps until <paramref name="nanoseconds"/> on LoadPlan's clock (at once when it has passed).</summary>
    internal static unsafe void SleepUntil(long nanoseconds)
    {
        if (nanoseconds <= LoadPlan.NowNanoseconds())
        {
            return;
        }

        // LoadPlan's clock is Stopwatch's, CLOCK_MONOTONIC on Linux. An interrupted sleep just ends early.
        var until = Platform.Libc.TimeSpec.FromNanoseconds(nanoseconds);
        _ = Platform.Libc.clock_nanosleep(Platform.Libc.CLOCK_MONOTONIC, Platform.Libc.TIMER_ABSTIME, &until, null);
    }

    private void EnterPhase(LoadPhase phase, ClientThreadState state)
    {
        if (_pacer is null && LoadPlan.IsSending(phase))
        {
            for (int slot = 0; slot < _connections.Length; slot++)
            {
                if (Volatile.Read(ref _connections[slot].State) == (int)DotnetConnectionState.Connected)
                {
                    Kick(slot, state);
                }
            }
        }

        _lastPhase = phase;
        Volatile.Write(ref _observedPhase, (int)phase);
    }

    /// <summary>
    /// The one way State changes: a compare-and-swap from <paramref name="from"/>, asserted to be a
    /// transition the state diagram in <see cref="DotnetConnectionState"/> allows.
    /// </summary>
    private static bool Transition(ref DotnetConnection c, DotnetConnectionState from, DotnetConnectionState to)
    {
        Debug.Assert(
            (from, to) is (DotnetConnectionState.Idle, DotnetConnectionState.Connecting)
                or (DotnetConnectionState.RetryWait, DotnetConnectionState.Connecting)
                or (DotnetConnectionState.Connecting, DotnetConnectionState.Connected)
                or (DotnetConnectionState.Connecting, DotnetConnectionState.TimingOut)
                or (DotnetConnectionState.Connecting or DotnetConnectionState.TimingOut, DotnetConnectionState.RetryWait)
                or (DotnetConnectionState.Connecting or DotnetConnectionState.TimingOut, DotnetConnectionState.Failed)
                or (DotnetConnectionState.Connected, DotnetConnectionState.Closed),
            $"{from} → {to} is not a transition of a client connection");
        return Interlocked.CompareExchange(ref c.State, (int)to, (int)from) == (int)from;
    }

    /// <summary>
    /// Ends a connected connection; false when it was not connected. Whatever it had outstanding is
    /// lost; <paramref name="byPeer"/>: the server closed or reset it.
    /// </summary>
    private bool Close(int slot, int errno, bool byPeer = false)
    {
        ref DotnetConnection c = ref _connections[slot];
        if (!Transition(ref c, DotnetConnectionState.Connected, DotnetConnectionState.Closed))
        {
            return false;
        }

        // After State: a sender that adds to Outstanding afterwards sees Closed and clears it itself.
        long outstanding = Interlocked.Exchange(ref c.Counters.Outstanding, 0);
        _tallies.CountClose(outstanding, byPeer, _stopRequested);

        if (errno != 0 && !_stopRequested)
        {
            _client.CountError(errno);
        }

        c.Socket?.Dispose();
        return true;
    }
}
