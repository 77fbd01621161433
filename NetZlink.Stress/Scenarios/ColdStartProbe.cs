// What a run's first moments looked like, for the cold-start fields: when the first connection
// came up, when the first echo came back, and the round trips of the first FirstEchoCount echoes
// of the run (warm-up or measured, every one timed, not sampled), to set beside the steady state's
// percentiles. Shared by every shard or socket thread of a client; after the first echoes the
// packet path pays one volatile read per echo, and nothing is allocated on it.
using NetZlink.Stress.Latency;
using NetZlink.Stress.Platform;

namespace NetZlink.Stress.Scenarios;

/// <summary>The first connection, the first echo and the first echoes' round trips of one run.</summary>
internal sealed class ColdStartProbe
{
    /// <summary>How many of the run's first echoes are timed (N of first_n).</summary>
    public const int FirstEchoCount = 100;

    private readonly long[] _roundTrips = new long[FirstEchoCount];
    private long _firstConnectedNs;
    private long _firstEchoNs;
    private int _taken;

    /// <summary>Whether echoes are still being timed (false once <see cref="FirstEchoCount"/> were).</summary>
    public bool WantsEchoes => Volatile.Read(ref _taken) < FirstEchoCount;

    /// <summary>A connection came up (the first one's time is kept).</summary>
    public void Connected()
    {
        if (Volatile.Read(ref _firstConnectedNs) == 0)
        {
            Interlocked.CompareExchange(ref _firstConnectedNs, LoadPlan.NowNanoseconds(), 0);
        }
    }

    /// <summary>An echo came back whose packet was stamped <paramref name="sentAtNs"/>; call while <see cref="WantsEchoes"/>.</summary>
    public void Echo(long sentAtNs)
    {
        long now = LoadPlan.NowNanoseconds();
        Interlocked.CompareExchange(ref _firstEchoNs, now, 0);
        int index = Interlocked.Increment(ref _taken) - 1;
        if (index < FirstEchoCount)
        {
            Volatile.Write(ref _roundTrips[index], Math.Max(0, now - sentAtNs));
        }
    }

    /// <summary>Sets the result's cold-start fields; call once the client's threads have stopped recording.</summary>
    public void ApplyTo(ScenarioResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        result.StartupToConnectedMs = ProcessStart.MillisecondsTo(Volatile.Read(ref _firstConnectedNs));
        result.StartupToFirstEchoMs = ProcessStart.MillisecondsTo(Volatile.Read(ref _firstEchoNs));
        int taken = Math.Min(Volatile.Read(ref _taken), FirstEchoCount);
        var histogram = LatencyHistograms.Create();
        for (int i = 0; i < taken; i++)
        {
            LatencyHistograms.Record(histogram, Volatile.Read(ref _roundTrips[i]));
        }

        SetFirstEchoes(result, histogram);
    }

    /// <summary>first_n, first_n_p50_us and first_n_max_us from the first echoes' round trips (ns).</summary>
    public static void SetFirstEchoes(ScenarioResult result, HdrHistogram.HistogramBase firstEchoes)
    {
        ArgumentNullException.ThrowIfNull(result);
        ArgumentNullException.ThrowIfNull(firstEchoes);
        result.FirstN = firstEchoes.TotalCount;
        result.FirstNP50Us = LatencyHistograms.PercentileUs(firstEchoes, 50);
        result.FirstNMaxUs = LatencyHistograms.MaxUs(firstEchoes);
    }
}
