// The histogram as JSON, exactly: the bucket layout, the totals and every non-empty bucket as an
// [index, count] pair. Reading it back gives a histogram equal to the written one in every
// count, so histograms recorded in several processes (client hosts) merge with Add into the same
// percentiles one process would have reported. The layout is part of the format: a file from a
// build with other bucket parameters is refused rather than re-bucketed, which would not be exact.
using System.Buffers;
using System.Globalization;
using System.Text.Json;

namespace NetZlink.Diagnostics;

public sealed partial class LatencyHistogram
{
    /// <summary>The version of the JSON form <see cref="WriteJson"/> writes and <see cref="ReadJson"/> reads.</summary>
    public const int JsonVersion = 1;

    private const string VersionName = "version";
    private const string UnitName = "unit";
    private const string SubBucketBitsName = "sub_bucket_bits";
    private const string MaxValueBitsName = "max_value_bits";
    private const string CountName = "count";
    private const string MinName = "min";
    private const string MaxName = "max";
    private const string SumName = "sum";
    private const string SumOfSquaresName = "sum_of_squares";
    private const string BucketsName = "buckets";
    private const string Unit = "ns";

    /// <summary>
    /// Writes the histogram as one JSON object: <c>version</c>, <c>unit</c> ("ns"), the layout
    /// (<c>sub_bucket_bits</c>, <c>max_value_bits</c>), <c>count</c>, <c>min</c>, <c>max</c>,
    /// <c>sum</c>, <c>sum_of_squares</c> and <c>buckets</c>, the non-empty buckets as
    /// <c>[index, count]</c> pairs in index order on one line.
    /// </summary>
    public void WriteJson(Utf8JsonWriter writer)
    {
        ArgumentNullException.ThrowIfNull(writer);
        writer.WriteStartObject();
        writer.WriteNumber(VersionName, JsonVersion);
        writer.WriteString(UnitName, Unit);
        writer.WriteNumber(SubBucketBitsName, SubBucketBits);
        writer.WriteNumber(MaxValueBitsName, MaxValueBits);
        writer.WriteNumber(CountName, _total);
        writer.WriteNumber(MinName, Min);
        writer.WriteNumber(MaxName, _max);
        // The shortest text that parses back to the same double: mean and stdev survive the trip.
        writer.WriteNumber(SumName, _sum);
        writer.WriteNumber(SumOfSquaresName, _sumOfSquares);
        writer.WritePropertyName(BucketsName);
        writer.WriteRawValue(CompactBuckets(), skipInputValidation: true);
        writer.WriteEndObject();
    }

    /// <summary>Rebuilds a histogram from the object <see cref="WriteJson"/> wrote.</summary>
    /// <exception cref="InvalidDataException">
    /// The object is not that form: another version or bucket layout, a missing or mistyped
    /// property, or buckets that disagree with the totals. The message names the property.
    /// </exception>
    public static LatencyHistogram ReadJson(JsonElement element)
    {
        if (element.ValueKind != JsonValueKind.Object)
        {
            throw Invalid($"expected an object, found a JSON {element.ValueKind}");
        }

        long version = Integer(element, VersionName);
        if (version != JsonVersion)
        {
            throw Invalid($"version {version} is not one this build reads ({JsonVersion})");
        }

        JsonElement unit = Property(element, UnitName);
        if (unit.ValueKind != JsonValueKind.String || unit.GetString() != Unit)
        {
            throw Invalid($"'{UnitName}' must be \"{Unit}\" (got {unit.GetRawText()})");
        }

        long subBucketBits = Integer(element, SubBucketBitsName);
        long maxValueBits = Integer(element, MaxValueBitsName);
        if (subBucketBits != SubBucketBits || maxValueBits != MaxValueBits)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture,
                $"bucket layout {SubBucketBitsName}={subBucketBits} {MaxValueBitsName}={maxValueBits} is not this build's ({SubBucketBits}, {MaxValueBits}), so it cannot be rebuilt exactly"));
        }

        var histogram = new LatencyHistogram();
        long count = Integer(element, CountName);
        long min = Integer(element, MinName);
        long max = Integer(element, MaxName);
        histogram._sum = Number(element, SumName);
        histogram._sumOfSquares = Number(element, SumOfSquaresName);
        if (count < 0 || min < 0 || max < 0 || min > MaxTrackableValue || max > MaxTrackableValue || min > max)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture,
                $"count={count} min={min} max={max} are out of range (0 <= min <= max <= {MaxTrackableValue}, count >= 0)"));
        }

        (int first, int last, long bucketTotal) = ReadBuckets(Property(element, BucketsName), histogram._counts);
        if (bucketTotal != count)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture, $"the buckets hold {bucketTotal} values but '{CountName}' is {count}"));
        }

        if (count == 0)
        {
            if (min != 0 || max != 0)
            {
                throw Invalid(string.Create(CultureInfo.InvariantCulture, $"an empty histogram has min=0 and max=0 (got {min}, {max})"));
            }

            return histogram;
        }

        // The exact min and max clamp every percentile, so they must lie in the outermost buckets.
        if (IndexOf(min) != first || IndexOf(max) != last)
        {
            throw Invalid(string.Create(CultureInfo.InvariantCulture,
                $"min={min} and max={max} do not fall in the first and last non-empty buckets ({first}, {last})"));
        }

        histogram._total = count;
        histogram._min = min;
        histogram._max = max;
        return histogram;
    }

    private byte[] CompactBuckets()
    {
        var buffer = new ArrayBufferWriter<byte>();
        using (var compact = new Utf8JsonWriter(buffer))
        {
            compact.WriteStartArray();
            for (int i = 0; i < _counts.Length; i++)
            {
                if (_counts[i] != 0)
                {
                    compact.WriteStartArray();
                    compact.WriteNumberValue(i);
                    compact.WriteNumberValue(_counts[i]);
                    compact.WriteEndArray();
                }
            }

            compact.WriteEndArray();
        }

        return buffer.WrittenSpan.ToArray();
    }

    private static (int First, int Last, long Total) ReadBuckets(JsonElement buckets, long[] counts)
    {
        if (buckets.ValueKind != JsonValueKind.Array)
        {
            throw Invalid($"'{BucketsName}' must be an array of [index, count] pairs (found a JSON {buckets.ValueKind})");
        }

        int first = -1;
        int previous = -1;
        long total = 0;
        int position = 0;
        foreach (JsonElement pair in buckets.EnumerateArray())
        {
            if (pair.ValueKind != JsonValueKind.Array || pair.GetArrayLength() != 2
                || !pair[0].TryGetInt32(out int index) || !pair[1].TryGetInt64(out long count))
            {
                throw Invalid(string.Create(CultureInfo.InvariantCulture,
                    $"'{BucketsName}' entry {position} must be [index, count] in whole numbers (got {pair.GetRawText()})"));
            }

            if (index <= previous || index >= counts.Length || count <= 0 || count > long.MaxValue - total)
            {
                throw Invalid(string.Create(CultureInfo.InvariantCulture,
                    $"'{BucketsName}' entry {position} is [{index}, {count}]: indexes must rise within 0..{counts.Length - 1} and counts be positive (and sum to at most 2^63-1)"));
            }

            counts[index] = count;
            total += count;
            first = first < 0 ? index : first;
            previous = index;
            position++;
        }

        return (first, previous, total);
    }

    private static JsonElement Property(JsonElement element, string name) =>
        element.TryGetProperty(name, out JsonElement value) ? value : throw Invalid($"'{name}' is missing");

    private static long Integer(JsonElement element, string name)
    {
        JsonElement value = Property(element, name);
        return value.ValueKind == JsonValueKind.Number && value.TryGetInt64(out long result)
            ? result
            : throw Invalid($"'{name}' must be a whole number (got {value.GetRawText()})");
    }

    private static double Number(JsonElement element, string name)
    {
        JsonElement value = Property(element, name);
        return value.ValueKind == JsonValueKind.Number && value.TryGetDouble(out double result) && double.IsFinite(result) && result >= 0
            ? result
            : throw Invalid($"'{name}' must be a non-negative number (got {value.GetRawText()})");
    }

    private static InvalidDataException Invalid(string problem) => new("latency histogram: " + problem);
}
