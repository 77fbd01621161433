// An echo server's own time per read: from the moment the bytes of a read are in the server's
// hands to the moment their echo has been handed to the socket (or the engine). The servers echo
// bytes without cutting packets, so the unit is one read: a packet, several, or part of one.
// Every n-th read of a connection is timed (its first always: an s0 run's one packet included),
// n being the server's --latency-sample-rate, into a histogram of the tools' layout
// (LatencyHistograms) kept per thread that records, without allocation on the packet path.
//
// The server prints the merged histogram when it stops, as one line on stdout
// (ServerTimeLine: "SERVER_TIME version=1 samples=N time_ns=value:count,..."), the same
// value:count encoding limit_echo uses; the parent that started it reads the line
// (ServerChildProcess) and puts server_p50_us, server_p99_us and server_max_us beside the round trip.
using HdrHistogram;

namespace NetZlink.Stress.Latency;

/// <summary>One server's receive-to-send times, recorded from any number of threads.</summary>
internal sealed class ServerTimes
{
    [ThreadStatic]
    private static Recorder? s_current;

    private readonly List<Recorder> _recorders = [];

    /// <param name="sampleRate">Time every n-th read of a connection (its first included); 0 times none.</param>
    public ServerTimes(int sampleRate)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sampleRate);
        SampleRate = sampleRate;
    }

    /// <summary>Every n-th read of a connection is timed; 0: none.</summary>
    public int SampleRate { get; }

    /// <summary>
    /// Whether the read numbered <paramref name="readIndex"/> (0 for a connection's first) is to be
    /// timed: the first and every <see cref="SampleRate"/>-th after it.
    /// </summary>
    public bool Samples(long readIndex) => SampleRate > 0 && readIndex % SampleRate == 0;

    /// <summary>Records one read's time from <paramref name="readAtNs"/> (on <see cref="Now"/>'s clock) to now.</summary>
    public void RecordSince(long readAtNs)
    {
        long elapsed = Now() - readAtNs;
        Recorder recorder = ForThisThread();
        using (recorder.Gate.EnterScope())
        {
            LatencyHistograms.Record(recorder.Histogram, elapsed);
        }
    }

    /// <summary>The clock the times are taken on (ns, monotonic).</summary>
    public static long Now() => Scenarios.LoadPlan.NowNanoseconds();

    /// <summary>Every thread's times added together (a recording under way is waited out).</summary>
    public LongHistogram Merged()
    {
        Recorder[] recorders;
        lock (_recorders)
        {
            recorders = [.. _recorders];
        }

        LongHistogram merged = LatencyHistograms.Create();
        foreach (Recorder recorder in recorders)
        {
            using (recorder.Gate.EnterScope())
            {
                merged.Add(recorder.Histogram);
            }
        }

        return merged;
    }

    private Recorder ForThisThread()
    {
        Recorder? current = s_current;
        if (current is not null && ReferenceEquals(current.Owner, this))
        {
            return current;
        }

        // The thread's first timed read for this server (or it last recorded for another one, as
        // several servers in one test process do): find or make its recorder.
        int thread = Environment.CurrentManagedThreadId;
        lock (_recorders)
        {
            current = _recorders.Find(r => r.Thread == thread);
            if (current is null)
            {
                current = new Recorder(this, thread);
                _recorders.Add(current);
            }
        }

        s_current = current;
        return current;
    }

    private sealed class Recorder(ServerTimes owner, int thread)
    {
        public ServerTimes Owner { get; } = owner;

        public int Thread { get; } = thread;

        public Lock Gate { get; } = new();

        public LongHistogram Histogram { get; } = LatencyHistograms.Create();
    }
}
