// `NetZlink.Stress merge …`: read every host's file, check and merge them, then report the merged
// result exactly as a run reports its own (RESULT/METRIC lines, --metrics-csv, --summary-json).
// Every failure becomes one "error: …" line: 1 for bad usage or an unusable file, 2 for a FAIL.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Merge;

/// <summary>The merge verb, minus the process.</summary>
internal static class MergeCommand
{
    /// <summary>The verb that selects this command as the first word.</summary>
    public const string Verb = "merge";

    /// <summary>Runs the words after `merge`; returns the exit code (see <see cref="ExitCodes"/>).</summary>
    public static int Run(IReadOnlyList<string> args, TextWriter stdout, TextWriter stderr)
    {
        VerbParseOutcome<MergeOptions> parsed = MergeCommandLine.Parse(args);
        if (parsed.Options is not { } options)
        {
            return ParseMessages.Print(parsed.Text, parsed.Errors, parsed.ExitCode, stdout, stderr);
        }

        ScenarioResult merged;
        try
        {
            HostSummary[] hosts = options.Inputs.Select(HostSummary.Read).ToArray();
            var warnings = new List<string>();
            merged = HostMerger.Merge(hosts, options.ScenarioId, warnings);
            foreach (string warning in warnings)
            {
                stderr.WriteLine($"warning: {warning}");
            }
        }
        catch (InvalidDataException e)
        {
            stderr.WriteLine($"error: {e.Message}");
            return ExitCodes.Usage;
        }

        try
        {
            Report(merged, options, stdout);
        }
        catch (Exception e) when (e is StressHostException or IOException or UnauthorizedAccessException)
        {
            stderr.WriteLine($"error: {e.Message}");
            return ExitCodes.Failure;
        }

        return merged.PassFail == "PASS" ? ExitCodes.Pass : ExitCodes.Failure;
    }

    /// <summary>Reports a result as a run reports its own: the lines on <paramref name="stdout"/>, then --metrics-csv and --summary-json (with the histogram, so it merges again).</summary>
    internal static void Report(ScenarioResult merged, MergeOptions options, TextWriter stdout)
    {
        if (options.MetricsCsvPath is { } csv)
        {
            OutputFiles.EnsureWritable(csv, "--metrics-csv");
        }

        if (options.SummaryJsonPath is { } json)
        {
            OutputFiles.EnsureWritable(json, "--summary-json");
        }

        stdout.WriteLine(ResultLines.Result(merged));
        stdout.WriteLine(ResultLines.Metric(merged));
        stdout.Flush();
        if (options.MetricsCsvPath is { } csvPath)
        {
            MetricsCsvFile.Append(csvPath, merged);
        }

        if (options.SummaryJsonPath is { } jsonPath)
        {
            SummaryJsonFile.Write(jsonPath, [merged], asArray: false, withHistogram: true);
        }
    }
}
