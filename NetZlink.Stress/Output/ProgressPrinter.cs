// The once-a-second progress line on stderr. It writes on the reporting thread, in order:
// Progress<T> would post each report to the thread pool, where lines can arrive late or
// out of order, or after the RESULT line.
using System.Diagnostics;
using System.Globalization;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>Prints every <see cref="ProgressSnapshot"/> the runner reports as one line.</summary>
internal sealed class ProgressPrinter : IProgress<ProgressSnapshot>
{
    private readonly TextWriter _writer;
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly Lock _gate = new();

    /// <summary>Starts the clock the lines' elapsed time counts from.</summary>
    public ProgressPrinter(TextWriter writer) => _writer = writer;

    /// <inheritdoc />
    public void Report(ProgressSnapshot value)
    {
        string line = Format(Stopwatch.GetElapsedTime(_started), value);
        lock (_gate)
        {
            _writer.WriteLine(line);
            _writer.Flush();
        }
    }

    /// <summary>
    /// "[  3.0s] phase=measure conns=10000 sent/s=412345 recv/s=412000 inflight=300000 p99_us=812.3 rss_mb=52.4 gc_heap_mb=1.3",
    /// and " starts_in=12.3s" after it while a client waits for --start-at.
    /// </summary>
    public static string Format(TimeSpan elapsed, ProgressSnapshot s)
    {
        string line = string.Create(
            CultureInfo.InvariantCulture,
            $"[{elapsed.TotalSeconds,5:F1}s] phase={s.Phase} conns={s.Connections} sent/s={s.SentPerSecond:F0} recv/s={s.ReceivedPerSecond:F0} inflight={s.InFlight} p99_us={s.P99UsSoFar:F1} rss_mb={s.RssMb:F1} gc_heap_mb={s.GcHeapMb:F1}");
        return s.StartsInSeconds is { } wait
            ? line + string.Create(CultureInfo.InvariantCulture, $" starts_in={Math.Max(0, wait):F1}s")
            : line;
    }
}
