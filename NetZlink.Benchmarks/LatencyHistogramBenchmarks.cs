// The stress tool's latency histogram: Record per value (over a fixed, log-spread set of
// latencies from 1 µs to 100 ms) and ValueAtPercentile on a histogram of a million values.
using BenchmarkDotNet.Attributes;
using NetZlink.Diagnostics;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public class LatencyHistogramBenchmarks
{
    private const int Values = 4096;

    private readonly long[] _values = new long[Values];
    private readonly LatencyHistogram _recording = new();
    private readonly LatencyHistogram _filled = new();

    [GlobalSetup]
    public void Setup()
    {
        var random = new Random(42);
        for (int i = 0; i < Values; i++)
        {
            _values[i] = (long)Math.Pow(10, 3 + (5 * random.NextDouble()));
        }

        for (int i = 0; i < 1_000_000; i++)
        {
            _filled.Record(_values[i % Values] + i);
        }
    }

    [Benchmark(OperationsPerInvoke = Values)]
    public void Record()
    {
        LatencyHistogram histogram = _recording;
        foreach (long value in _values)
        {
            histogram.Record(value);
        }
    }

    [Benchmark]
    public double ValueAtPercentile50() => _filled.ValueAtPercentile(50);

    [Benchmark]
    public double ValueAtPercentile9999() => _filled.ValueAtPercentile(99.99);
}
