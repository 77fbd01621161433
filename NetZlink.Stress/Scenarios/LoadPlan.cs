// What every shard's load handler shares: the packet shape and the current phase. Written by the
// runner, read by the shards (one volatile field), so no lock is ever taken on the packet path.
using System.Diagnostics;

namespace NetZlink.Stress.Scenarios;

internal sealed class LoadPlan
{
    private static readonly double NanosecondsPerTick = 1e9 / Stopwatch.Frequency;
    private volatile LoadPhase _phase = LoadPhase.Connect;

    public LoadPlan(int size, int inflight, int sendBatch, int latencySampleRate, long packetsPerConnection, bool verifyPayload)
    {
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

    public LoadPhase Phase
    {
        get => _phase;
        set => _phase = value;
    }

    public static bool IsSending(LoadPhase phase) => phase is LoadPhase.Warmup or LoadPhase.Measure;

    /// <summary>Monotonic clock in nanoseconds, the unit packets carry.</summary>
    public static long NowNanoseconds()
    {
        long ticks = Stopwatch.GetTimestamp();
        return Stopwatch.Frequency == 1_000_000_000 ? ticks : (long)(ticks * NanosecondsPerTick);
    }

    /// <summary>The filler byte at body offset <paramref name="offset"/> (bytes 0..8 are phase and time).</summary>
    public static byte Filler(int offset) => (byte)(offset * 31 + 7);
}
