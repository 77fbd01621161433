// Where one run's files go: DIR/<stack>/<scenario>/.
namespace NetZlink.Stress.Compare;

/// <summary>The files of one (stack, scenario) run.</summary>
internal sealed record RunPaths(string Directory)
{
    public static RunPaths For(string outDirectory, string stack, string scenario) =>
        new(Path.Combine(outDirectory, stack, scenario));

    /// <summary>--metrics-csv of the run.</summary>
    public string MetricsCsv => Path.Combine(Directory, "metrics.csv");

    /// <summary>--summary-json of the run.</summary>
    public string SummaryJson => Path.Combine(Directory, "summary.json");

    /// <summary>The run's HdrHistogram percentile distribution, beside its summary.json.</summary>
    public string Hgrm => Output.SummaryJsonFile.HgrmPath(SummaryJson);

    /// <summary>--timeseries-csv of the run.</summary>
    public string TimeseriesCsv => Path.Combine(Directory, "timeseries.csv");

    /// <summary>The client's stdout (RESULT and METRIC lines).</summary>
    public string Stdout => Path.Combine(Directory, "stdout.txt");
}
