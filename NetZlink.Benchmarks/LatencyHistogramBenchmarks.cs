// The stress tool's latency recording, which is HdrHistogram's LongHistogram with the layout of
// NetZlink.Stress/Latency/LatencyHistograms.cs (1 ns to 2^40 - 1 ns, 3 significant digits):
// RecordValue per value (over a fixed, log-spread set of latencies from 1 µs to 100 ms) and
// GetValueAtPercentile on a histogram of a million values.
using BenchmarkDotNet.Attributes;
using HdrHistogram;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public class LatencyHistogramBenchmarks
{
    private const int Values = 4096;
    private const long HighestTrackableNs = (1L << 40) - 1;
    private const int SignificantDigits = 3;

    private readonly long[] _values = new long[Values];
    private readonly LongHistogram _recording = new(1, HighestTrackableNs, SignificantDigits);
    private readonly LongHistogram _filled = new(1, HighestTrackableNs, SignificantDigits);

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
            _filled.RecordValue(_values[i % Values] + i);
        }
    }

    [Benchmark(OperationsPerInvoke = Values)]
    public void Record()
    {
        LongHistogram histogram = _recording;
        foreach (long value in _values)
        {
            histogram.RecordValue(value);
        }
    }

    [Benchmark]
    public long ValueAtPercentile50() => _filled.GetValueAtPercentile(50);

    [Benchmark]
    public long ValueAtPercentile9999() => _filled.GetValueAtPercentile(99.99);
}
