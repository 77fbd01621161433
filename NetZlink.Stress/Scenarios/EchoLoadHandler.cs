// The s0/s2 client load on one shard: keeps up to `inflight` packets outstanding on every
// connection (closed loop), or in an open-model run (--rate) sends each packet when the schedule
// says it is due, `inflight` staying a cap; times every n-th measured echo, and counts everything
// the pass rules need.
//
// Open model: the ShardPacer names the slots whose packets fell due, each slot sends what it owes
// (due by now minus sent), stamped with each packet's due time, and the shard asks the engine to
// wake it for the next due packet (WakeBy) rather than spinning. A slot that could not send all it
// owed (cap reached, or the engine's send queue full) is "blocked": what it sends when it resumes
// was held past its due time and counts as late. Measured packets still owed when the measured
// phase ends are sent during the drain (their wait is in their latency), and Unsent counts them
// down so the runner knows when the drain is done.
//
// Runs on the shard thread only. Counters are plain fields the runner reads with Volatile.Read;
// the histogram is merged after the shard has seen Done. Nothing here allocates per packet:
// packets are written in place into the shard's send scratch, whose filler bytes are laid
// down once at start.
using System.Buffers.Binary;
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Engine;

namespace NetZlink.Stress.Scenarios;

internal sealed class EchoLoadHandler : IConnectionHandler, IDueSink
{
    private const long PhasePollNs = 1_000_000;
    private readonly LoadPlan _plan;
    private readonly ShardPacer? _pacer;
    private OpenSchedule? _schedule;
    private readonly bool[] _wantsTopUp;
    private int[] _topUp;
    private int[] _topUpDraining;
    private readonly byte[] _expectedFiller;
    private readonly int _packetsPerFrame;
    private int _topUpCount;
    private long _measuredSeen;
    private LoadPhase _lastPhase = LoadPhase.Connect;
    private long _allocatedAtMeasureStart;

    // Each slot's counters (the connection in it: what it has outstanding, its budget and schedule),
    // the shard's totals in the same type (its Outstanding is the shard's in-flight count), and its
    // connect results and closes. Written by the shard thread only; the runner reads the totals and
    // tallies while the shard runs (AddTotals), final once ObservedPhase is Done. The runner reads
    // one total per figure, never the slots: a sum over slots read one by one could pass zero in
    // flight while the shard moved packets between them.
    private readonly EchoConnectionCounters[] _connections;
    private EchoConnectionCounters _totals;
    private readonly ConnectionTallies _tallies = new();

    /// <summary>The TLS reason of the last connect whose handshake failed (read by other threads with Volatile.Read), or null.</summary>
    public string? LastTlsFailure;
    public long LostPartialBytes;
    public long AllocatedDuringMeasure;
    /// <summary>Open model, in the drain: measured packets still owed by this shard's open connections.</summary>
    public long Unsent;
    public int ObservedPhase;

    public EchoLoadHandler(EngineShard shard, LoadPlan plan, int shardCount)
    {
        _plan = plan;
        _pacer = plan.IsOpen ? new ShardPacer(shard.Index, shardCount, shard.SlotCount) : null;
        _connections = new EchoConnectionCounters[shard.SlotCount];
        _wantsTopUp = new bool[shard.SlotCount];
        _topUp = new int[shard.SlotCount];
        _topUpDraining = new int[shard.SlotCount];
        _packetsPerFrame = Math.Max(1, Math.Min(plan.SendBatch, shard.SendScratch.Length / plan.PacketLength));
        if (_packetsPerFrame * plan.PacketLength > shard.SendScratch.Length)
        {
            throw new ArgumentException($"A {plan.PacketLength}-byte packet does not fit the engine's {shard.SendScratch.Length}-byte send buffer.");
        }

        _expectedFiller = plan.NewExpectedBody();

        Span<byte> scratch = shard.SendScratch;
        for (int p = 0; p < _packetsPerFrame; p++)
        {
            Span<byte> packet = scratch.Slice(p * plan.PacketLength, plan.PacketLength);
            BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)plan.Size);
            _expectedFiller.AsSpan(9).CopyTo(packet[(4 + 9)..]);
        }

        Histogram = LatencyHistograms.Create();
    }

    /// <summary>Round trips of sampled measured packets, in nanoseconds.</summary>
    public LongHistogram Histogram { get; }

    public void OnConnected(EngineShard shard, Connection connection)
    {
        _tallies.Connected++;
        _plan.ColdStart.Connected();
        if (_pacer is null && LoadPlan.IsSending(_plan.Phase))
        {
            RequestTopUp(connection.Slot);
        }
    }

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
    {
        if (ZlinkSocket.DescribeTlsFailure(failure.TlsError, failure.TlsVerifyResult) is string tls)
        {
            Volatile.Write(ref LastTlsFailure, tls);
        }

        _tallies.CountConnectFailure(failure.TimedOut);
    }

    public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
    {
        int slot = connection.Slot;
        EchoCount count = _totals.CountEcho(_plan, _expectedFiller, packet);
        if (count == EchoCount.Bad)
        {
            shard.Close(connection);
            return;
        }

        // Settled on the slot (an echo with nothing outstanding there is a gating violation), in the totals alike.
        int settled = _connections[slot].SettleEchoes(1, shared: false);
        _totals.Outstanding -= settled;
        _totals.GatingViolations += 1 - settled;
        if (count == EchoCount.Measured)
        {
            int rate = _plan.LatencySampleRate;
            bool sampled = rate > 0 && ++_measuredSeen % rate == 0;
            // Open model: throughput counts until the last measured echo (see ScenarioRunner).
            long now = sampled || _pacer is not null ? LoadPlan.NowNanoseconds() : 0;
            if (_pacer is not null)
            {
                Volatile.Write(ref _totals.LastMeasuredEchoNs, now);
            }

            if (sampled)
            {
                LatencyHistograms.Record(Histogram, now - EchoConnectionCounters.SentAtNs(packet));
            }
        }

        if (_plan.SendsIn(_plan.Phase))
        {
            RequestTopUp(slot);
        }
    }

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
        ref EchoConnectionCounters c = ref _connections[connection.Slot];
        LostPartialBytes += lostBytes;
        if (reason == ConnectionEndReason.ProtocolError)
        {
            _totals.ProtocolErrors++;
        }

        // Whatever was outstanding on it will never come back: it stays counted as sent, not received,
        // and is lost (the partial packet dropped with it is one of these).
        long outstanding = c.Outstanding;
        c.Outstanding = 0;
        // Lost before the in-flight count drops (the runner reads the in-flight count first).
        _tallies.CountClose(outstanding, byPeer: reason == ConnectionEndReason.Remote, stopping: reason == ConnectionEndReason.EngineStopped);
        Volatile.Write(ref _totals.Outstanding, _totals.Outstanding - outstanding);
        if (_lastPhase == LoadPhase.Drain && _schedule is { } schedule)
        {
            // Its measured packets not sent yet never will be: the drain stops waiting for them.
            Unsent -= schedule.TotalFor(_pacer!.ConnectionOf(connection.Slot)) - c.ScheduledSent;
        }
    }

    /// <summary>Adds this shard's totals and tallies to <paramref name="sum"/>.</summary>
    public void AddTotals(ref LoadTotalsSum sum)
    {
        // Before Outstanding: the shard lowers Unsent after raising it (see SendOwed).
        sum.AddUnsent(Volatile.Read(ref Unsent));
        sum.Add(ref _totals);
        sum.Add(_tallies);
    }

    public void OnDue(int slot)
    {
        RequestTopUp(slot);
    }

    public void OnPass(EngineShard shard)
    {
        LoadPhase phase = _plan.Phase;
        if (phase != _lastPhase)
        {
            EnterPhase(shard, phase);
        }

        if (_pacer is not null)
        {
            PaceOpen(shard, phase);
        }
        else if (LoadPlan.IsSending(phase) && _topUpCount > 0)
        {
            TopUpRequested(shard, phase, now: 0);
        }
    }

    /// <summary>Open model: queues the slots with packets due, sends what they owe, and sets the next wake-up.</summary>
    private void PaceOpen(EngineShard shard, LoadPhase phase)
    {
        long now = LoadPlan.NowNanoseconds();
        long nextDue = long.MaxValue;
        if (_plan.SendsIn(phase))
        {
            nextDue = _pacer!.Advance(now, this);
            if (_topUpCount > 0)
            {
                TopUpRequested(shard, phase, now);
            }
        }

        // With nothing due (before the measured phase, past its last packet), a short nap instead of
        // the engine's idle sleep: the shard then starts a schedule, or counts what the drain still
        // owes, within a millisecond of the runner's phase change, however quiet the connections are.
        if (phase != LoadPhase.Done)
        {
            shard.WakeBy(LoadPlan.TicksFromNanoseconds(nextDue != long.MaxValue ? nextDue : now + PhasePollNs));
        }
    }

    private void TopUpRequested(EngineShard shard, LoadPhase phase, long now)
    {
        bool measured = _plan.IsMeasured(phase);
        byte phaseByte = measured ? (byte)1 : (byte)0;
        // Swap lists: a connection that cannot take more now asks again into the fresh one.
        (_topUp, _topUpDraining) = (_topUpDraining, _topUp);
        int count = _topUpCount;
        _topUpCount = 0;
        for (int i = 0; i < count; i++)
        {
            int slot = _topUpDraining[i];
            _wantsTopUp[slot] = false;
            if (_pacer is null)
            {
                TopUp(shard, slot, phaseByte, measured);
            }
            else
            {
                SendOwed(shard, slot, now, phaseByte, measured, phase == LoadPhase.Drain);
            }
        }
    }

    private void EnterPhase(EngineShard shard, LoadPhase phase)
    {
        if (phase == LoadPhase.Measure)
        {
            _allocatedAtMeasureStart = GC.GetAllocatedBytesForCurrentThread();
        }
        else if (_lastPhase == LoadPhase.Measure)
        {
            AllocatedDuringMeasure = GC.GetAllocatedBytesForCurrentThread() - _allocatedAtMeasureStart;
        }

        if (_pacer is not null)
        {
            EnterOpenPhase(shard, phase);
        }
        else if (LoadPlan.IsSending(phase))
        {
            for (int slot = 0; slot < _connections.Length; slot++)
            {
                if (shard.IsConnected(slot))
                {
                    RequestTopUp(slot);
                }
            }
        }

        _lastPhase = phase;
        Volatile.Write(ref ObservedPhase, (int)phase);
    }

    private void EnterOpenPhase(EngineShard shard, LoadPhase phase)
    {
        // A new schedule: warm-up packets still owed are dropped with the old one. (A shard that slept
        // through a whole measured phase meets its schedule at the drain, and sends all of it late.)
        if ((LoadPlan.IsSending(phase) || phase == LoadPhase.Drain) && _plan.Schedule is { } schedule
            && !ReferenceEquals(schedule, _schedule))
        {
            _schedule = schedule;
            _pacer!.Begin(schedule);
            for (int slot = 0; slot < _connections.Length; slot++)
            {
                Volatile.Write(ref _connections[slot].ScheduledSent, 0);
                _connections[slot].Blocked = false;
            }
        }

        if (phase == LoadPhase.Drain && _schedule is { } measured)
        {
            long unsent = 0;
            for (int slot = 0; slot < _connections.Length; slot++)
            {
                if (shard.IsConnected(slot))
                {
                    unsent += measured.TotalFor(_pacer!.ConnectionOf(slot)) - _connections[slot].ScheduledSent;
                }
            }

            Unsent = unsent;
        }
    }

    private void RequestTopUp(int slot)
    {
        if (!_wantsTopUp[slot])
        {
            _wantsTopUp[slot] = true;
            _topUp[_topUpCount++] = slot;
        }
    }

    private void TopUp(EngineShard shard, int slot, byte phaseByte, bool measured)
    {
        ref EchoConnectionCounters c = ref _connections[slot];
        int want = (int)(_plan.Inflight - c.Outstanding);
        long budget = _plan.PacketsPerConnection - c.Requested;
        if (budget < want)
        {
            want = (int)Math.Max(0, budget);
        }

        Span<byte> scratch = shard.SendScratch;
        int length = _plan.PacketLength;
        Connection connection = shard.ConnectionAt(slot);
        while (want > 0)
        {
            int packets = Math.Min(want, _packetsPerFrame);
            long now = LoadPlan.NowNanoseconds();
            for (int p = 0; p < packets; p++)
            {
                Span<byte> body = scratch.Slice((p * length) + 4, 9);
                body[0] = phaseByte;
                BinaryPrimitives.WriteInt64LittleEndian(body[1..], now);
            }

            SendResult result = shard.Send(connection, scratch[..(packets * length)]);
            if (result is SendResult.Closed or SendResult.Full)
            {
                if (result == SendResult.Full)
                {
                    RequestTopUp(slot);
                }

                return;
            }

            CountSent(ref c, packets, measured, scheduled: false, late: false);
            want -= packets;
        }
    }

    /// <summary>Counts <paramref name="packets"/> just handed to the engine for a slot: outstanding and sent, on the slot and in the shard's totals.</summary>
    private void CountSent(ref EchoConnectionCounters c, int packets, bool measured, bool scheduled, bool late)
    {
        c.Outstanding += packets;
        c.CountSent(packets, measured, scheduled, late);
        _totals.Outstanding += packets;
        _totals.CountSent(packets, measured, scheduled: false, late);
    }

    /// <summary>Open model: sends what <paramref name="slot"/> owes by <paramref name="now"/>, as far as the cap and the send queue let it.</summary>
    private void SendOwed(EngineShard shard, int slot, long now, byte phaseByte, bool measured, bool draining)
    {
        OpenSchedule schedule = _schedule!;
        int connectionIndex = _pacer!.ConnectionOf(slot);
        ref EchoConnectionCounters c = ref _connections[slot];
        long owed = schedule.DueFor(connectionIndex, now) - c.ScheduledSent;
        if (owed <= 0)
        {
            c.Blocked = false;
            return;
        }

        // Held back since an earlier try: everything it sends now left after its due time.
        bool late = c.Blocked;
        int room = (int)(_plan.Inflight - c.Outstanding);
        Span<byte> scratch = shard.SendScratch;
        int length = _plan.PacketLength;
        Connection connection = shard.ConnectionAt(slot);
        while (owed > 0 && room > 0)
        {
            int packets = (int)Math.Min(Math.Min(owed, room), _packetsPerFrame);
            long first = c.ScheduledSent;
            for (int p = 0; p < packets; p++)
            {
                Span<byte> body = scratch.Slice((p * length) + 4, 9);
                body[0] = phaseByte;
                BinaryPrimitives.WriteInt64LittleEndian(body[1..], schedule.DueAtNs(connectionIndex, first + p));
            }

            SendResult result = shard.Send(connection, scratch[..(packets * length)]);
            if (result == SendResult.Closed)
            {
                return;
            }

            if (result == SendResult.Full)
            {
                // Backpressure: try again next pass; what it sends then is late.
                c.Blocked = true;
                RequestTopUp(slot);
                return;
            }

            CountSent(ref c, packets, measured, scheduled: true, late);

            if (draining)
            {
                // After Outstanding, released: a runner that sees it lower sees the packets in flight too.
                Volatile.Write(ref Unsent, Unsent - packets);
            }

            owed -= packets;
            room -= packets;
        }

        // Still owing: the cap is reached, and an echo's top-up resumes it.
        c.Blocked = owed > 0;
    }
}
