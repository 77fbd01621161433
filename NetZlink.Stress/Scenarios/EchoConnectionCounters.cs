// One connection's load counters, the same type for every client stack: the netzlink engine's
// EchoLoadHandler (one per slot, on the shard thread only), the dotnet socket client
// (DotnetConnection) and the dotnet stream client (its StreamConnection). The echo accounting
// (what a returned packet counts as, how outstanding packets are settled) and the sum over
// connections into LoadTotals live here once, so the three stacks count alike.
//
// Who writes which field is the owning stack's rule (written where the counters are kept); the
// runner sums them with Volatile.Read while the run goes on (LoadTotalsSum.Add).
using System.Buffers.Binary;

namespace NetZlink.Stress.Scenarios;

/// <summary>What one returned packet counted as.</summary>
internal enum EchoCount
{
    /// <summary>Not the packet that was sent (length or payload): counted in BadEchoes; the connection is closed.</summary>
    Bad,

    /// <summary>A good echo of a packet sent outside the measured phase.</summary>
    Echo,

    /// <summary>A good echo of a measured packet (ReceivedMeasured counted it).</summary>
    Measured,
}

/// <summary>One client connection's send and receive counters.</summary>
internal struct EchoConnectionCounters
{
    // Send side.
    /// <summary>Packets the connection has taken on (the closed model's per-connection budget counts against it).</summary>
    public long Requested;
    public long SentTotal;
    public long SentMeasured;
    /// <summary>Open model: the schedule ScheduledSent counts against (a new phase's schedule restarts it).</summary>
    public OpenSchedule? Schedule;
    /// <summary>Open model: packets of the schedule sent (written with release after Outstanding grew).</summary>
    public long ScheduledSent;
    /// <summary>Open model: the cap or a full send queue held back packets that were due; what goes next is late.</summary>
    public bool Blocked;
    /// <summary>Open model: measured packets sent late (see Blocked).</summary>
    public long Late;

    // Receive side.
    public long ReceivedTotal;
    public long ReceivedMeasured;
    public long GatingViolations;
    public long BadEchoes;
    /// <summary>Echoes whose length header was not the packet's (the connection is then closed).</summary>
    public long ProtocolErrors;
    /// <summary>Open model: when the last measured echo arrived (ns).</summary>
    public long LastMeasuredEchoNs;

    /// <summary>Packets sent (or about to be) and not yet echoed (a shard's totals hold its connections' sum).</summary>
    public long Outstanding;

    /// <summary>
    /// How many packets the connection sends in its next frame of at most <paramref name="perFrame"/>:
    /// closed model, up to the inflight cap and the per-connection budget; open model
    /// (<paramref name="schedule"/>), what it owes by now within the cap (see <see cref="Owed"/>).
    /// The caller holds the send side.
    /// </summary>
    public int Wants(LoadPlan plan, OpenSchedule? schedule, int connectionIndex, int perFrame, out bool late)
    {
        int room = (int)Math.Max(int.MinValue, plan.Inflight - Volatile.Read(ref Outstanding));
        if (schedule is not null)
        {
            return Owed(schedule, connectionIndex, room, perFrame, out late);
        }

        late = false;
        return (int)Math.Min(Math.Min(room, perFrame), Math.Max(0, plan.PacketsPerConnection - Requested));
    }

    /// <summary>
    /// Open model: how many of the packets the connection owes to send in this frame, within the
    /// cap's <paramref name="room"/> and <paramref name="perFrame"/>; <paramref name="late"/> when
    /// they were held back before. Keeps Blocked: set when the cap leaves packets owed, cleared once
    /// this frame takes all that is owed.
    /// </summary>
    public int Owed(OpenSchedule schedule, int connectionIndex, int room, int perFrame, out bool late)
    {
        if (!ReferenceEquals(Schedule, schedule))
        {
            // A new phase's schedule: warm-up packets still owed are dropped with the old one.
            Volatile.Write(ref Schedule, schedule);
            Volatile.Write(ref ScheduledSent, 0);
            Blocked = false;
        }

        long owed = schedule.DueFor(connectionIndex, LoadPlan.NowNanoseconds()) - ScheduledSent;
        late = Blocked;
        int want = (int)Math.Min(Math.Max(owed, 0), Math.Min(Math.Max(room, 0), perFrame));
        if (owed <= want)
        {
            Blocked = false;
        }
        else if (room <= perFrame)
        {
            // The cap, not the frame size, stops it with packets due.
            Blocked = true;
        }

        return want;
    }

    /// <summary>
    /// Counts <paramref name="packets"/> handed to the socket or engine (Outstanding is the caller's:
    /// it is raised before the send). <paramref name="scheduled"/>: open model, they are the
    /// schedule's next packets (ScheduledSent is released after Outstanding grew: the runner reads
    /// it first); <paramref name="late"/>: they were held back past their due time.
    /// </summary>
    public void CountSent(int packets, bool measured, bool scheduled = false, bool late = false)
    {
        if (scheduled)
        {
            Volatile.Write(ref ScheduledSent, ScheduledSent + packets);
        }

        if (late && measured)
        {
            Late += packets;
        }

        Requested += packets;
        SentTotal += packets;
        if (measured)
        {
            SentMeasured += packets;
        }
    }

    /// <summary>
    /// Checks and counts one returned packet: its length and (with VerifyPayload) its body against
    /// <paramref name="expectedBody"/>, ReceivedTotal, ReceivedMeasured, the cold-start probe.
    /// </summary>
    public EchoCount CountEcho(LoadPlan plan, ReadOnlySpan<byte> expectedBody, ReadOnlySpan<byte> packet)
    {
        if (packet.Length != plan.PacketLength || (plan.VerifyPayload && !packet[(4 + 9)..].SequenceEqual(expectedBody[9..])))
        {
            BadEchoes++;
            return EchoCount.Bad;
        }

        ReceivedTotal++;
        if (plan.ColdStart.WantsEchoes)
        {
            plan.ColdStart.Echo(SentAtNs(packet));
        }

        if (packet[4] != 1)
        {
            return EchoCount.Echo;
        }

        ReceivedMeasured++;
        return EchoCount.Measured;
    }

    /// <summary>
    /// Takes <paramref name="echoes"/> good echoes off Outstanding. Echoes beyond it (of packets never
    /// sent) are a bookkeeping error: counted in GatingViolations, and Outstanding does not go
    /// negative. <paramref name="shared"/>: the send path moves Outstanding from other threads too
    /// (Interlocked); otherwise the caller's thread is the only writer.
    /// </summary>
    /// <returns>The echoes that settled an outstanding packet (the rest were violations).</returns>
    public int SettleEchoes(int echoes, bool shared)
    {
        if (echoes <= 0)
        {
            return 0;
        }

        long after = shared ? Interlocked.Add(ref Outstanding, -echoes) : Outstanding -= echoes;
        if (after >= 0)
        {
            return echoes;
        }

        int excess = (int)Math.Min(echoes, -after);
        GatingViolations += excess;
        if (shared)
        {
            Interlocked.Add(ref Outstanding, excess);
        }
        else
        {
            Outstanding += excess;
        }

        return echoes - excess;
    }

    /// <summary>The send time a packet carries (bytes 5..12 of the packet, after the length header and phase byte).</summary>
    public static long SentAtNs(ReadOnlySpan<byte> packet) => BinaryPrimitives.ReadInt64LittleEndian(packet[5..]);
}

/// <summary>A client's connect results and closes, kept per shard (or per client) beside its connections' counters.</summary>
internal sealed class ConnectionTallies
{
    public long Connected;
    public long ConnectFailed;
    public long ConnectTimedOut;
    public long Disconnected;
    /// <summary>Established connections the server ended (closed or reset).</summary>
    public long PeerClosed;
    /// <summary>Packets outstanding on connections when they ended: sent, never echoed.</summary>
    public long Lost;

    /// <summary>Counts a connect that failed or timed out (several threads may count at once).</summary>
    public void CountConnectFailure(bool timedOut) => Interlocked.Increment(ref timedOut ? ref ConnectTimedOut : ref ConnectFailed);

    /// <summary>
    /// Counts a connection that ended with <paramref name="outstanding"/> packets not echoed; when
    /// <paramref name="stopping"/> (the client is being stopped) they are not lost and the peer did not close it.
    /// </summary>
    public void CountClose(long outstanding, bool byPeer, bool stopping)
    {
        Interlocked.Increment(ref Disconnected);
        if (!stopping)
        {
            Interlocked.Add(ref Lost, outstanding);
            if (byPeer)
            {
                Interlocked.Increment(ref PeerClosed);
            }
        }
    }
}

/// <summary>Sums connections' counters and tallies into one <see cref="LoadTotals"/> while the run goes on.</summary>
internal struct LoadTotalsSum
{
    private long _connected, _connectFailed, _connectTimedOut, _disconnected, _peerClosed, _lost;
    private long _sentTotal, _receivedTotal, _sentMeasured, _receivedMeasured, _inFlight, _gating, _bad, _protocol;
    private long _late, _unsent, _lastEcho;

    /// <summary>Adds a shard's (or client's) connect results and closes.</summary>
    public void Add(ConnectionTallies t)
    {
        _connected += Volatile.Read(ref t.Connected);
        _connectFailed += Volatile.Read(ref t.ConnectFailed);
        _connectTimedOut += Volatile.Read(ref t.ConnectTimedOut);
        _disconnected += Volatile.Read(ref t.Disconnected);
        _peerClosed += Volatile.Read(ref t.PeerClosed);
        _lost += Volatile.Read(ref t.Lost);
    }

    /// <summary>Adds measured packets the drain still waits for, counted elsewhere (read before the connections' Outstanding).</summary>
    public void AddUnsent(long unsent) => _unsent += unsent;

    /// <summary>
    /// Adds one connection. <paramref name="owing"/> (open model, in the drain: the measured schedule)
    /// with <paramref name="open"/>: what the connection still owes of it counts as unsent.
    /// </summary>
    public void Add(ref EchoConnectionCounters c, OpenSchedule? owing = null, int connectionIndex = 0, bool open = false)
    {
        if (owing is not null && open)
        {
            // Before Outstanding: the sender raises Outstanding before ScheduledSent.
            long scheduledSent = ReferenceEquals(Volatile.Read(ref c.Schedule), owing) ? Volatile.Read(ref c.ScheduledSent) : 0;
            _unsent += Math.Max(0, owing.TotalFor(connectionIndex) - scheduledSent);
        }

        _late += Volatile.Read(ref c.Late);
        _lastEcho = Math.Max(_lastEcho, Volatile.Read(ref c.LastMeasuredEchoNs));
        _sentTotal += Volatile.Read(ref c.SentTotal);
        _receivedTotal += Volatile.Read(ref c.ReceivedTotal);
        _sentMeasured += Volatile.Read(ref c.SentMeasured);
        _receivedMeasured += Volatile.Read(ref c.ReceivedMeasured);
        _inFlight += Volatile.Read(ref c.Outstanding);
        _gating += Volatile.Read(ref c.GatingViolations);
        _bad += Volatile.Read(ref c.BadEchoes);
        _protocol += Volatile.Read(ref c.ProtocolErrors);
    }

    public readonly LoadTotals ToTotals() => new(
        _connected, _connectFailed, _connectTimedOut, _disconnected, _sentTotal, _receivedTotal, _sentMeasured, _receivedMeasured,
        _inFlight, _gating, _bad, _peerClosed, _protocol, _lost, _late, _unsent, _lastEcho);
}
