// The s0/s2 client load on one shard: keeps up to `inflight` packets outstanding on every
// connection, times every n-th measured echo, and counts everything the pass rules need.
//
// Runs on the shard thread only. Counters are plain fields the runner reads with Volatile.Read;
// the histogram is merged after the shard has seen Done. Nothing here allocates per packet:
// packets are written in place into the shard's send scratch, whose filler bytes are laid
// down once at start.
using System.Buffers.Binary;
using NetZlink.Diagnostics;
using NetZlink.Engine;

namespace NetZlink.Stress.Scenarios;

internal sealed class EchoLoadHandler : IConnectionHandler
{
    private readonly LoadPlan _plan;
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
    public int ObservedPhase;

    public EchoLoadHandler(EngineShard shard, LoadPlan plan)
    {
        _plan = plan;
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

        Histogram = new LatencyHistogram();
    }

    /// <summary>Round trips of sampled measured packets, in nanoseconds.</summary>
    public LatencyHistogram Histogram { get; }

    public void OnConnected(EngineShard shard, Connection connection)
    {
        Connected++;
        if (LoadPlan.IsSending(_plan.Phase))
        {
            RequestTopUp(connection.Slot);
        }
    }

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
    {
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
        if (packet[4] == 1)
        {
            long measured = ++ReceivedMeasured;
            int rate = _plan.LatencySampleRate;
            if (rate > 0 && measured % rate == 0)
            {
                long sentAt = BinaryPrimitives.ReadInt64LittleEndian(packet[5..]);
                Histogram.Record(LoadPlan.NowNanoseconds() - sentAt);
            }
        }

        if (LoadPlan.IsSending(_plan.Phase))
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
    }

    public void OnPass(EngineShard shard)
    {
        LoadPhase phase = _plan.Phase;
        if (phase != _lastPhase)
        {
            EnterPhase(shard, phase);
        }

        if (!LoadPlan.IsSending(phase) || _topUpCount == 0)
        {
            return;
        }

        byte phaseByte = phase == LoadPhase.Measure ? (byte)1 : (byte)0;
        // Swap lists: a connection that cannot take more now asks again into the fresh one.
        (_topUp, _topUpDraining) = (_topUpDraining, _topUp);
        int count = _topUpCount;
        _topUpCount = 0;
        for (int i = 0; i < count; i++)
        {
            int slot = _topUpDraining[i];
            _wantsTopUp[slot] = false;
            TopUp(shard, slot, phaseByte, phase == LoadPhase.Measure);
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

        if (LoadPlan.IsSending(phase))
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

            _inflight[slot] += packets;
            _sentPerConnection[slot] += packets;
            InFlight += packets;
            SentTotal += packets;
            if (measured)
            {
                SentMeasured += packets;
            }

            want -= packets;
        }
    }
}
