// What each thread that runs dotnet-client work keeps for itself: a receive buffer, a send scratch
// with the packets' constant bytes laid down once, the latency histogram of the echoes it handled,
// and what its callbacks allocated during the measured phase. Completions of one shard's
// connections may run on several threads at once, so a per-shard histogram would need a lock on
// every record; one per thread needs none on the packet path. The thread's gate is held for the
// whole of each callback (Enter), uncontended except for the moment the runner reads the histogram
// (progress line, end of run).
//
// Allocations are summed over the callbacks themselves, not from the thread's first to its last
// measured callback: with the runtime's default dispatch the callbacks run on thread-pool threads
// that also run the runner's own timers and progress line (about 11 KB/s, whatever the packet
// rate), which are not the packet path.
using System.Buffers.Binary;
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

/// <summary>One thread's share of a <see cref="DotnetClient"/>'s work.</summary>
internal sealed class ClientThreadState
{
    [ThreadStatic]
    private static ClientThreadState? s_current;

    [ThreadStatic]
    private static List<ClientThreadState>? s_others;

    private readonly LoadPlan _plan;
    private readonly Lock _gate = new();
    private int _depth;
    private long _allocAtEnter = -1;
    private long _allocatedDuringMeasure;

    private ClientThreadState(DotnetClient owner, LoadPlan plan)
    {
        Owner = owner;
        _plan = plan;
        PacketsPerFrame = Math.Max(1, plan.SendBatch);
        SendScratch = new byte[PacketsPerFrame * plan.PacketLength];
        for (int p = 0; p < PacketsPerFrame; p++)
        {
            Span<byte> packet = SendScratch.AsSpan(p * plan.PacketLength, plan.PacketLength);
            BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)plan.Size);
            for (int i = 9; i < plan.Size; i++)
            {
                packet[4 + i] = LoadPlan.Filler(i);
            }
        }

        // One read takes everything a connection can have outstanding in the default profile.
        ReceiveBuffer = new byte[Math.Max(64 * 1024, 2 * plan.PacketLength)];
    }

    public DotnetClient Owner { get; }

    /// <summary>Taken by the runner to read <see cref="Histogram"/> and <see cref="AllocatedDuringMeasure"/>.</summary>
    public Lock Gate => _gate;

    /// <summary>Round trips (ns) of the sampled measured echoes this thread handled.</summary>
    public LongHistogram Histogram { get; } = LatencyHistograms.Create();

    /// <summary>Measured echoes this thread handled, for picking every n-th one.</summary>
    public long MeasuredSeen { get; set; }

    public byte[] ReceiveBuffer { get; }

    /// <summary>PacketsPerFrame packets, headers and filler in place; phase and time written per frame.</summary>
    public byte[] SendScratch { get; }

    public int PacketsPerFrame { get; }

    /// <summary>This thread's state for <paramref name="owner"/>, created on the thread's first call.</summary>
    public static ClientThreadState For(DotnetClient owner)
    {
        ClientThreadState? current = s_current;
        return current is not null && ReferenceEquals(current.Owner, owner) ? current : Switch(owner);
    }

    /// <summary>Writes the phase byte and send time into the first <paramref name="packets"/> packets.</summary>
    public ReadOnlySpan<byte> BuildFrame(int packets, byte phaseByte, long now)
    {
        int length = _plan.PacketLength;
        Span<byte> frame = SendScratch.AsSpan(0, packets * length);
        for (int p = 0; p < packets; p++)
        {
            Span<byte> body = frame.Slice((p * length) + 4, 9);
            body[0] = phaseByte;
            BinaryPrimitives.WriteInt64LittleEndian(body[1..], now);
        }

        return frame;
    }

    /// <summary>
    /// Open model: writes the phase byte and each packet's due time (packets <paramref name="firstIndex"/>, … of
    /// <paramref name="connection"/> in <paramref name="schedule"/>) into the first <paramref name="packets"/> packets.
    /// </summary>
    public ReadOnlySpan<byte> BuildScheduledFrame(int packets, byte phaseByte, OpenSchedule schedule, int connection, long firstIndex)
    {
        int length = _plan.PacketLength;
        Span<byte> frame = SendScratch.AsSpan(0, packets * length);
        for (int p = 0; p < packets; p++)
        {
            Span<byte> body = frame.Slice((p * length) + 4, 9);
            body[0] = phaseByte;
            BinaryPrimitives.WriteInt64LittleEndian(body[1..], schedule.DueAtNs(connection, firstIndex + p));
        }

        return frame;
    }

    /// <summary>
    /// Starts a callback on the owning thread: takes the gate for its whole length and, in the
    /// measured phase, brackets its allocations. Callbacks nested on one thread (a connect settled
    /// from the shard thread) count once, in the outermost.
    /// </summary>
    public CallbackScope Enter(LoadPhase phase)
    {
        Lock.Scope held = _gate.EnterScope();
        if (_depth++ == 0)
        {
            _allocAtEnter = phase == LoadPhase.Measure ? GC.GetAllocatedBytesForCurrentThread() : -1;
        }

        return new CallbackScope(this, held);
    }

    /// <summary>Bytes this thread's callbacks allocated in the measured phase (read under <see cref="Gate"/>).</summary>
    public long AllocatedDuringMeasure => _allocatedDuringMeasure;

    /// <summary>Ends the callback <see cref="Enter"/> started (the gate is released by the scope).</summary>
    internal void Exit()
    {
        if (--_depth == 0 && _allocAtEnter >= 0)
        {
            _allocatedDuringMeasure += GC.GetAllocatedBytesForCurrentThread() - _allocAtEnter;
        }
    }

    private static ClientThreadState Switch(DotnetClient owner)
    {
        // A thread that served another client (an earlier run in this process) keeps that state
        // until the client is disposed; this list is touched only on the first call per pair.
        List<ClientThreadState> others = s_others ??= [];
        others.RemoveAll(static s => s.Owner.IsDisposed);
        ClientThreadState? state = others.Find(s => ReferenceEquals(s.Owner, owner));
        if (state is null)
        {
            state = new ClientThreadState(owner, owner.Plan);
            owner.Register(state);
            others.Add(state);
        }

        s_current = state;
        return state;
    }
}
