// A log-bucketed latency histogram with bounded relative error, recorded without locks or
// allocation. One instance per shard; the shards' histograms are merged with Add at the end.
// (HdrHistogram is not served by the package mirror here, so this is NetZlink's own.) The exact
// JSON form, for merging the histograms of several processes, is in LatencyHistogram.Json.cs.
using System.Numerics;
using System.Runtime.CompilerServices;

namespace NetZlink.Diagnostics;

/// <summary>
/// Counts non-negative values (nanoseconds, by convention) in buckets that double in width every
/// power of two, each split into 128 sub-buckets: any recorded value is reported within 0.8% of
/// itself. Values from 0 to 2^40 (about 18 minutes in ns) are kept; larger ones are clamped.
/// Not thread-safe: record from one thread, merge afterwards.
/// </summary>
public sealed partial class LatencyHistogram
{
    private const int SubBucketBits = 7;
    private const int SubBucketCount = 1 << SubBucketBits;
    private const int MaxValueBits = 40;

    /// <summary>The largest value kept; larger values are recorded as this.</summary>
    public const long MaxTrackableValue = (1L << MaxValueBits) - 1;

    private readonly long[] _counts = new long[(MaxValueBits - SubBucketBits + 1) * SubBucketCount];
    private long _total;
    private long _min = long.MaxValue;
    private long _max;
    private double _sum;
    private double _sumOfSquares;

    /// <summary>Number of values recorded.</summary>
    public long TotalCount => _total;

    /// <summary>Smallest value recorded, or 0 when empty.</summary>
    public long Min => _total == 0 ? 0 : _min;

    /// <summary>Largest value recorded (exact), or 0 when empty.</summary>
    public long Max => _max;

    /// <summary>Arithmetic mean of the recorded values, or 0 when empty.</summary>
    public double Mean => _total == 0 ? 0 : _sum / _total;

    /// <summary>Population standard deviation of the recorded values, or 0 when empty.</summary>
    public double StandardDeviation
    {
        get
        {
            if (_total == 0)
            {
                return 0;
            }

            double mean = Mean;
            double variance = (_sumOfSquares / _total) - (mean * mean);
            return variance > 0 ? Math.Sqrt(variance) : 0;
        }
    }

    /// <summary>Records one value; negative values count as 0.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Record(long value)
    {
        if (value < 0)
        {
            value = 0;
        }
        else if (value > MaxTrackableValue)
        {
            value = MaxTrackableValue;
        }

        _counts[IndexOf(value)]++;
        _total++;
        _sum += value;
        _sumOfSquares += (double)value * value;
        if (value < _min)
        {
            _min = value;
        }

        if (value > _max)
        {
            _max = value;
        }
    }

    /// <summary>Adds every count of <paramref name="other"/> into this histogram.</summary>
    public void Add(LatencyHistogram other)
    {
        ArgumentNullException.ThrowIfNull(other);
        for (int i = 0; i < _counts.Length; i++)
        {
            _counts[i] += other._counts[i];
        }

        _total += other._total;
        _sum += other._sum;
        _sumOfSquares += other._sumOfSquares;
        if (other._total > 0)
        {
            _min = Math.Min(_min, other._min);
            _max = Math.Max(_max, other._max);
        }
    }

    /// <summary>Forgets every value.</summary>
    public void Reset()
    {
        Array.Clear(_counts);
        _total = 0;
        _sum = 0;
        _sumOfSquares = 0;
        _min = long.MaxValue;
        _max = 0;
    }

    /// <summary>
    /// The value below which <paramref name="percentile"/> percent of the recorded values fall,
    /// reported as the middle of its bucket (clamped to the exact min and max); 0 when empty.
    /// </summary>
    public double ValueAtPercentile(double percentile)
    {
        if (_total == 0)
        {
            return 0;
        }

        percentile = Math.Clamp(percentile, 0, 100);
        long rank = Math.Max(1, (long)Math.Ceiling(percentile / 100.0 * _total));
        long seen = 0;
        for (int i = 0; i < _counts.Length; i++)
        {
            seen += _counts[i];
            if (seen >= rank)
            {
                double middle = LowerBound(i) + ((BucketWidth(i) - 1) / 2.0);
                return Math.Clamp(middle, Min, Max);
            }
        }

        return Max;
    }

    /// <summary>Copies the non-empty buckets as (lower bound, width, count) for export.</summary>
    public IEnumerable<(long LowerBound, long Width, long Count)> Buckets()
    {
        for (int i = 0; i < _counts.Length; i++)
        {
            if (_counts[i] != 0)
            {
                yield return (LowerBound(i), BucketWidth(i), _counts[i]);
            }
        }
    }

    /// <summary>Records <paramref name="count"/> values at <paramref name="value"/> (used to merge exported buckets).</summary>
    public void RecordCount(long value, long count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        value = Math.Clamp(value, 0, MaxTrackableValue);
        _counts[IndexOf(value)] += count;
        _total += count;
        _sum += (double)value * count;
        _sumOfSquares += (double)value * value * count;
        if (count > 0)
        {
            _min = Math.Min(_min, value);
            _max = Math.Max(_max, value);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int IndexOf(long value)
    {
        if (value < SubBucketCount)
        {
            return (int)value;
        }

        int shift = (63 - BitOperations.LeadingZeroCount((ulong)value)) - SubBucketBits;
        int sub = (int)(value >> shift) - SubBucketCount;
        return ((shift + 1) * SubBucketCount) + sub;
    }

    private static long LowerBound(int index)
    {
        int bucket = index / SubBucketCount;
        long sub = index % SubBucketCount;
        return bucket == 0 ? sub : (SubBucketCount + sub) << (bucket - 1);
    }

    private static long BucketWidth(int index)
    {
        int bucket = index / SubBucketCount;
        return bucket == 0 ? 1 : 1L << (bucket - 1);
    }
}
