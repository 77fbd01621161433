// --timeseries-csv: the client's once-a-second progress as CSV, so that `compare` can chart
// throughput over time. Rows are flushed as they come: an interrupted run keeps what it had.
using System.Diagnostics;
using System.Globalization;
using System.Text;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Output;

/// <summary>Writes every progress report as a row, then passes it on to the next reporter (if any).</summary>
internal sealed class TimeseriesCsvFile : IProgress<ProgressSnapshot>, IDisposable
{
    /// <summary>The header row; limit_echo (native/bench) writes the same.</summary>
    /// rss_mb is the client process's resident set, gc_heap_mb its managed heap (GC.GetTotalMemory):
    /// what a soak run watches for growth (limit_echo, which has no managed heap, leaves it empty).
    public const string Header = "elapsed,phase,sent_per_s,recv_per_s,inflight,rss_mb,gc_heap_mb";

    private readonly StreamWriter _writer;
    private readonly IProgress<ProgressSnapshot>? _next;
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly Lock _gate = new();

    /// <summary>Creates (or replaces) <paramref name="path"/> and writes the header.</summary>
    public TimeseriesCsvFile(string path, IProgress<ProgressSnapshot>? next)
    {
        OutputFiles.CreateParentDirectory(path);
        _writer = new StreamWriter(path, append: false, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false));
        _writer.Write(Header);
        _writer.Write('\n');
        _writer.Flush();
        _next = next;
    }

    /// <inheritdoc />
    public void Report(ProgressSnapshot value)
    {
        string row = Row(Stopwatch.GetElapsedTime(_started), value);
        lock (_gate)
        {
            _writer.Write(row);
            _writer.Write('\n');
            _writer.Flush();
        }

        _next?.Report(value);
    }

    /// <summary>"3.012,measure,412345.00,412000.00,300000,52.4,1.3".</summary>
    public static string Row(TimeSpan elapsed, ProgressSnapshot s) => string.Create(
        CultureInfo.InvariantCulture,
        $"{elapsed.TotalSeconds:F3},{s.Phase},{s.SentPerSecond:F2},{s.ReceivedPerSecond:F2},{s.InFlight},{s.RssMb:F1},{s.GcHeapMb:F1}");

    /// <inheritdoc />
    public void Dispose()
    {
        lock (_gate)
        {
            _writer.Dispose();
        }
    }
}
