// The open-model send schedule of one sending phase (--rate): packet n of the phase (n = 0, 1, 2,
// …) is due at Start + n / rate and belongs to connection n mod ccu. Each connection so sends
// rate/ccu packets a second, evenly spaced, and the connections take turns, so that the sum is
// evenly spaced too rather than ccu packets at once every ccu/rate seconds. Connection k's j-th
// packet is packet j*ccu + k. Only packets due before End belong to the phase.
//
// Everything here is a pure function of the clock: a shard works out what each of its connections
// owes when it looks, instead of setting a timer per packet or per connection. A packet's due
// time is what it carries in its timestamp, so its round trip counts from when it should have
// left, whatever held it back (coordinated omission).
namespace NetZlink.Stress.Scenarios;

/// <summary>When each packet of an open-model phase is due; immutable, shared by every shard.</summary>
internal sealed class OpenSchedule
{
    private readonly double _intervalNs;
    private readonly long _packetsInPhase;

    /// <param name="rate">Packets per second over all connections (above 0).</param>
    /// <param name="connections">Connections the packets are spread over (ccu).</param>
    /// <param name="startNs">When packet 0 is due, on <see cref="LoadPlan.NowNanoseconds"/>'s clock.</param>
    /// <param name="seconds">Length of the phase: packets due at or after start + seconds are not in it.</param>
    public OpenSchedule(double rate, int connections, long startNs, double seconds)
    {
        if (!(rate > 0) || !double.IsFinite(rate))
        {
            throw new ArgumentOutOfRangeException(nameof(rate), rate, "The rate must be a positive number of packets per second.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(connections, 1);
        Rate = rate;
        Connections = connections;
        StartNs = startNs;
        _intervalNs = 1e9 / rate;
        // n is in the phase when n * interval < seconds: n < seconds * rate.
        _packetsInPhase = (long)Math.Ceiling(Math.Max(0, seconds) * rate);
    }

    /// <summary>Packets per second over all connections.</summary>
    public double Rate { get; }

    /// <summary>The connections the packets go round.</summary>
    public int Connections { get; }

    /// <summary>When packet 0 is due (ns).</summary>
    public long StartNs { get; }

    /// <summary>Packets of the whole phase, over all connections.</summary>
    public long PacketsInPhase => _packetsInPhase;

    /// <summary>Packets of the phase (all connections) due at or before <paramref name="nowNs"/>.</summary>
    public long DueCount(long nowNs)
    {
        if (nowNs < StartNs)
        {
            return 0;
        }

        double elapsed = nowNs - StartNs;
        long due = (long)Math.Floor(elapsed / _intervalNs) + 1;
        return Math.Min(due, _packetsInPhase);
    }

    /// <summary>Packets of connection <paramref name="connection"/> (0..ccu-1) due at or before <paramref name="nowNs"/>.</summary>
    public long DueFor(int connection, long nowNs) => ForConnection(connection, DueCount(nowNs));

    /// <summary>All packets connection <paramref name="connection"/> has in the phase.</summary>
    public long TotalFor(int connection) => ForConnection(connection, _packetsInPhase);

    /// <summary>When packet <paramref name="index"/> of <paramref name="connection"/> is due (ns).</summary>
    public long DueAtNs(int connection, long index) => At((index * Connections) + connection);

    /// <summary>When packet <paramref name="n"/> of the phase is due (ns); never later than the clock said it was due.</summary>
    public long At(long n) => StartNs + (long)(n * _intervalNs);

    /// <summary>How many of the first <paramref name="count"/> packets of the phase belong to <paramref name="connection"/>.</summary>
    private long ForConnection(int connection, long count) =>
        count > connection ? ((count - connection - 1) / Connections) + 1 : 0;
}
