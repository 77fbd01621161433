// What every shard's load handler shares: the packet shape, the current phase and, in an open-model
// run (--rate), the current phase's send schedule. Written by the runner, read by the shards
// (volatile fields: the schedule is published before the phase that uses it), so no lock is ever
// taken on the packet path.
using System.Diagnostics;

namespace NetZlink.Stress.Scenarios;

internal sealed class LoadPlan
{
    private static readonly double NanosecondsPerTick = 1e9 / Stopwatch.Frequency;
    private volatile LoadPhase _phase = LoadPhase.Connect;
    private volatile OpenSchedule? _schedule;

    public LoadPlan(int size, int inflight, int sendBatch, int latencySampleRate, long packetsPerConnection, bool verifyPayload,
        double rate = 0, int connections = 1)
    {
        Rate = rate;
        Connections = connections;
        Size = size;
        Inflight = inflight;
        SendBatch = sendBatch;
        LatencySampleRate = latencySampleRate;
        PacketsPerConnection = packetsPerConnection;
        VerifyPayload = verifyPayload;
    }

    /// <summary>Body bytes of each packet (the 4-byte length header comes on top).</summary>
    public int Size { get; }

    public int PacketLength => Size + 4;

    public int Inflight { get; }

    public int SendBatch { get; }

    public int LatencySampleRate { get; }

    /// <summary>Packets each connection sends in all (s0: 1); long.MaxValue for no limit.</summary>
    public long PacketsPerConnection { get; }

    /// <summary>Check every echoed byte against what was sent (s0).</summary>
    public bool VerifyPayload { get; }

    /// <summary>The current phase; setting it calls <see cref="PhaseChanged"/> so that idle shards look at once.</summary>
    public LoadPhase Phase
    {
        get => _phase;
        set
        {
            _phase = value;
            PhaseChanged?.Invoke();
        }
    }

    /// <summary>Set by the client stack: wakes its shards after the runner changes the phase.</summary>
    public Action? PhaseChanged { get; set; }

    /// <summary>The run's first connection, first echo and first echoes' round trips (the cold-start fields).</summary>
    public ColdStartProbe ColdStart { get; } = new();

    /// <summary>Target packets per second over all connections (--rate); 0 = closed loop (keep `inflight` outstanding).</summary>
    public double Rate { get; }

    /// <summary>Connections the load runs on (the open-model schedule goes round them).</summary>
    public int Connections { get; }

    /// <summary>True for an open-model run: packets leave on a schedule, not when echoes return.</summary>
    public bool IsOpen => Rate > 0;

    /// <summary>The schedule of the current (or last) sending phase; null in a closed-loop run.</summary>
    public OpenSchedule? Schedule => _schedule;

    public static bool IsSending(LoadPhase phase) => phase is LoadPhase.Warmup or LoadPhase.Measure;

    /// <summary>
    /// Whether connections send in <paramref name="phase"/>: in the sending phases, and in an open-model
    /// run also during the drain, which still sends the measured packets that fell due before the
    /// measured phase ended but were held back (by the inflight cap or a full send queue).
    /// </summary>
    public bool SendsIn(LoadPhase phase) => IsSending(phase) || (IsOpen && phase == LoadPhase.Drain);

    /// <summary>Whether packets sent in <paramref name="phase"/> are measured ones (phase byte 1).</summary>
    public bool IsMeasured(LoadPhase phase) => phase == LoadPhase.Measure || (IsOpen && phase == LoadPhase.Drain);

    /// <summary>
    /// Open model: publishes the schedule of a sending phase of <paramref name="seconds"/> starting now;
    /// call just before setting that phase. Nothing in a closed-loop run.
    /// </summary>
    public void BeginSchedule(double seconds)
    {
        if (IsOpen)
        {
            _schedule = new OpenSchedule(Rate, Connections, NowNanoseconds(), seconds);
        }
    }

    /// <summary>Monotonic clock in nanoseconds, the unit packets carry.</summary>
    public static long NowNanoseconds()
    {
        long ticks = Stopwatch.GetTimestamp();
        return Stopwatch.Frequency == 1_000_000_000 ? ticks : (long)(ticks * NanosecondsPerTick);
    }

    /// <summary>A time on <see cref="NowNanoseconds"/>' clock as a <see cref="Stopwatch.GetTimestamp"/> value.</summary>
    public static long TicksFromNanoseconds(long nanoseconds) =>
        Stopwatch.Frequency == 1_000_000_000 ? nanoseconds : (long)(nanoseconds / NanosecondsPerTick);

    /// <summary>The filler byte at body offset <paramref name="offset"/> (bytes 0..8 are phase and time).</summary>
    public static byte Filler(int offset) => (byte)(offset * 31 + 7);

    /// <summary>A packet body as every sender fills it, bytes 0 to 8 (the phase and the send time) left zero: what echoes are checked against.</summary>
    public byte[] NewExpectedBody()
    {
        byte[] body = new byte[Size];
        for (int i = 9; i < Size; i++)
        {
            body[i] = Filler(i);
        }

        return body;
    }
}
