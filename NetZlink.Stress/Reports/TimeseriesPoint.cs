// One row of a run's --timeseries-csv, and the reader of the file.
using System.Globalization;

namespace NetZlink.Stress.Reports;

/// <summary>The client's progress over one second.</summary>
internal readonly record struct TimeseriesPoint(double Elapsed, string Phase, double SentPerSecond, double ReceivedPerSecond, long InFlight)
{
    /// <summary>Reads every row of <paramref name="path"/> (after its header); an absent file reads as no rows.</summary>
    /// <exception cref="InvalidDataException">A row does not start with the five columns compare charts.</exception>
    public static IReadOnlyList<TimeseriesPoint> ReadAll(string path)
    {
        if (!File.Exists(path))
        {
            return [];
        }

        var points = new List<TimeseriesPoint>();
        int number = 0;
        foreach (string line in File.ReadLines(path))
        {
            number++;
            if (number == 1 || line.Length == 0)
            {
                continue;
            }

            string[] c = line.Split(',');
            // rss_mb and gc_heap_mb may follow (files of older runs lack them): compare charts the first five
            if (c.Length is not (5 or 7)
                || !double.TryParse(c[0], NumberStyles.Float, CultureInfo.InvariantCulture, out double elapsed)
                || !double.TryParse(c[2], NumberStyles.Float, CultureInfo.InvariantCulture, out double sent)
                || !double.TryParse(c[3], NumberStyles.Float, CultureInfo.InvariantCulture, out double received)
                || !long.TryParse(c[4], NumberStyles.Integer, CultureInfo.InvariantCulture, out long inflight))
            {
                throw new InvalidDataException($"{path} line {number} is not elapsed,phase,sent_per_s,recv_per_s,inflight: '{line}'");
            }

            points.Add(new TimeseriesPoint(elapsed, c[1], sent, received, inflight));
        }

        return points;
    }
}
