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
    private readonly long[] _scheduledSent;
    private readonly bool[] _blocked;
    private OpenSchedule? _schedule;
    private readonly int[] _inflight;
    private readonly long[] _sentPerConnection;
    private readonly bool[] _wantsTopUp;
    private int[] _topUp;
    private int[] _topUpDraining;
    private readonly byte[] _expectedFiller;
    private readonly int _packetsPerFrame;
    private int _topUpCount;
    private LoadPhase _lastPhase = LoadPhase.Connect;
    private long _allocatedAtMeasureStart;

    // Read by the runner while the shard runs (Volatile.Read), final once ObservedPhase is Done.
    public long Connected;
    public long ConnectFailed;

    /// <summary>The TLS reason of the last connect whose handshake failed (read by other threads with Volatile.Read), or null.</summary>
    public string? LastTlsFailure;
    public long ConnectTimedOut;
    public long Disconnected;
    public long SentTotal;
    public long ReceivedTotal;
    public long SentMeasured;
    public long ReceivedMeasured;
    public long InFlight;
    public long GatingViolations;
    public long BadEchoes;
    public long LostPartialBytes;
    public long PeerClosed;
    public long ProtocolErrors;
    public long Lost;
    public long AllocatedDuringMeasure;
    public long Late;
    public long Unsent;
    public long LastMeasuredEchoNs;
    public int ObservedPhase;

    public EchoLoadHandler(EngineShard shard, LoadPlan plan, int shardCount)
    {
        _plan = plan;
        _pacer = plan.IsOpen ? new ShardPacer(shard.Index, shardCount, shard.SlotCount) : null;
        _scheduledSent = plan.IsOpen ? new long[shard.SlotCount] : [];
        _blocked = plan.IsOpen ? new bool[shard.SlotCount] : [];
        _inflight = new int[shard.SlotCount];
        _sentPerConnection = new long[shard.SlotCount];
        _wantsTopUp = new bool[shard.SlotCount];
        _topUp = new int[shard.SlotCount];
        _topUpDraining = new int[shard.SlotCount];
        _packetsPerFrame = Math.Max(1, Math.Min(plan.SendBatch, shard.SendScratch.Length / plan.PacketLength));
        if (_packetsPerFrame * plan.PacketLength > shard.SendScratch.Length)
        {
            throw new ArgumentException($"A {plan.PacketLength}-byte packet does not fit the engine's {shard.SendScratch.Length}-byte send buffer.");
        }

        _expectedFiller = new byte[plan.Size];
        for (int i = 9; i < plan.Size; i++)
        {
            _expectedFiller[i] = LoadPlan.Filler(i);
        }

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
        Connected++;
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

        if (failure.TimedOut)
        {
            ConnectTimedOut++;
        }
        else
        {
            ConnectFailed++;
        }
    }

    public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
    {
        if (packet.Length != _plan.PacketLength || (_plan.VerifyPayload && !packet[(4 + 9)..].SequenceEqual(_expectedFiller.AsSpan(9))))
        {
            BadEchoes++;
            shard.Close(connection);
            return;
        }

        int slot = connection.Slot;
        if (_inflight[slot] == 0)
        {
            GatingViolations++;
        }
        else
        {
            _inflight[slot]--;
            InFlight--;
        }

        ReceivedTotal++;
        if (_plan.ColdStart.WantsEchoes)
        {
            _plan.ColdStart.Echo(BinaryPrimitives.ReadInt64LittleEndian(packet[5..]));
        }

        if (packet[4] == 1)
        {
            long measured = ++ReceivedMeasured;
            int rate = _plan.LatencySampleRate;
            bool sampled = rate > 0 && measured % rate == 0;
            // Open model: throughput counts until the last measured echo (see ScenarioRunner).
            long now = sampled || _pacer is not null ? LoadPlan.NowNanoseconds() : 0;
            if (_pacer is not null)
            {
                LastMeasuredEchoNs = now;
            }

            if (sampled)
            {
                long sentAt = BinaryPrimitives.ReadInt64LittleEndian(packet[5..]);
                LatencyHistograms.Record(Histogram, now - sentAt);
            }
        }

        if (_plan.SendsIn(_plan.Phase))
        {
            RequestTopUp(slot);
        }
    }

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
        Disconnected++;
        LostPartialBytes += lostBytes;
        if (reason == ConnectionEndReason.Remote)
        {
            PeerClosed++;
        }
        else if (reason == ConnectionEndReason.ProtocolError)
        {
            ProtocolErrors++;
        }

        // Whatever was outstanding on it will never come back: it stays counted as sent, not received,
        // and is lost (the partial packet dropped with it is one of these).
        if (reason != ConnectionEndReason.EngineStopped)
        {
            Lost += _inflight[connection.Slot];
        }

        InFlight -= _inflight[connection.Slot];
        _inflight[connection.Slot] = 0;
        if (_lastPhase == LoadPhase.Drain && _schedule is { } schedule)
        {
            // Its measured packets not sent yet never will be: the drain stops waiting for them.
            Unsent -= schedule.TotalFor(_pacer!.ConnectionOf(connection.Slot)) - _scheduledSent[connection.Slot];
        }
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
            for (int slot = 0; slot < _inflight.Length; slot++)
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
            Array.Clear(_scheduledSent);
            Array.Clear(_blocked);
        }

        if (phase == LoadPhase.Drain && _schedule is { } measured)
        {
            long unsent = 0;
            for (int slot = 0; slot < _scheduledSent.Length; slot++)
            {
                if (shard.IsConnected(slot))
                {
                    unsent += measured.TotalFor(_pacer!.ConnectionOf(slot)) - _scheduledSent[slot];
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
        int want = _plan.Inflight - _inflight[slot];
        long budget = _plan.PacketsPerConnection - _sentPerConnection[slot];
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

            _sentPerConnection[slot] += packets;
            CountSent(slot, packets, measured);
            want -= packets;
        }
    }

    /// <summary>Counts <paramref name="packets"/> just handed to the engine for <paramref name="slot"/> as outstanding and sent.</summary>
    private void CountSent(int slot, int packets, bool measured)
    {
        _inflight[slot] += packets;
        InFlight += packets;
        SentTotal += packets;
        if (measured)
        {
            SentMeasured += packets;
        }
    }

    /// <summary>Open model: sends what <paramref name="slot"/> owes by <paramref name="now"/>, as far as the cap and the send queue let it.</summary>
    private void SendOwed(EngineShard shard, int slot, long now, byte phaseByte, bool measured, bool draining)
    {
        OpenSchedule schedule = _schedule!;
        int connectionIndex = _pacer!.ConnectionOf(slot);
        long owed = schedule.DueFor(connectionIndex, now) - _scheduledSent[slot];
        if (owed <= 0)
        {
            _blocked[slot] = false;
            return;
        }

        // Held back since an earlier try: everything it sends now left after its due time.
        bool late = _blocked[slot] && measured;
        int room = _plan.Inflight - _inflight[slot];
        Span<byte> scratch = shard.SendScratch;
        int length = _plan.PacketLength;
        Connection connection = shard.ConnectionAt(slot);
        while (owed > 0 && room > 0)
        {
            int packets = (int)Math.Min(Math.Min(owed, room), _packetsPerFrame);
            long first = _scheduledSent[slot];
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
                _blocked[slot] = true;
                RequestTopUp(slot);
                return;
            }

            _scheduledSent[slot] += packets;
            CountSent(slot, packets, measured);
            if (late)
            {
                Late += packets;
            }

            if (draining)
            {
                // After InFlight, released: a runner that sees it lower sees the packets in flight too.
                Volatile.Write(ref Unsent, Unsent - packets);
            }

            owed -= packets;
            room -= packets;
        }

        // Still owing: the cap is reached, and an echo's top-up resumes it.
        _blocked[slot] = owed > 0;
    }
}
