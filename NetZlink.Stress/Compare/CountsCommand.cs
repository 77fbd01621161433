// `NetZlink.Stress counts [--metrics-csv F] [--summary-json F] [--scenario-id ID] [FILE]`: judges the
// COUNTS line limit_echo printed (in FILE, or on standard input) and reports it as a run reports
// its own: RESULT/METRIC lines, --metrics-csv, --summary-json with the histogram and its .hgrm.
// What `compare` does for its c-epoll runs, for a limit_echo run by hand.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Merge;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>The counts verb, minus the process.</summary>
internal static class CountsCommand
{
    /// <summary>The verb that selects this command as the first word.</summary>
    public const string Verb = "counts";

    /// <summary>The help text of `counts --help`.</summary>
    public static string HelpText => string.Join('\n',
        "usage: NetZlink.Stress counts [--metrics-csv PATH] [--summary-json PATH] [--scenario-id ID] [FILE]",
        "Reads the COUNTS line native/build/bench/limit_echo's client printed (from FILE, or standard input",
        "when there is none or it is -), judges it by the pass rules of a NetZlink.Stress run, and reports it",
        "the same way: RESULT/METRIC lines (stack=c-epoll), and the files below.",
        "  --metrics-csv PATH   append the row to this CSV (header when new)",
        "  --summary-json PATH  write the result as JSON, with its latency histogram, and its .hgrm beside it",
        "  --scenario-id ID     the result's id (default: c-epoll-<scenario>)",
        "exit codes: 0 PASS, 1 bad usage or no usable COUNTS line, 2 FAIL");

    /// <summary>Runs the words after `counts`; returns the exit code (see <see cref="ExitCodes"/>).</summary>
    public static int Run(IReadOnlyList<string> args, TextReader stdin, TextWriter stdout, TextWriter stderr)
    {
        VerbParseOutcome<MergeOptions> parsed = MergeCommandLine.Parse(args, Verb, HelpText, noInput: null, maxInputs: 1);
        if (parsed.Options is not { } options)
        {
            return ParseMessages.Print(parsed.Text, parsed.Errors, parsed.ExitCode, stdout, stderr);
        }

        ScenarioResult result;
        string source = options.Inputs.Count == 0 || options.Inputs[0] == "-" ? "standard input" : options.Inputs[0];
        try
        {
            string text = source == "standard input" ? stdin.ReadToEnd() : File.ReadAllText(source);
            string line = LimitEchoCounts.Find(text.Split('\n').Select(l => l.TrimEnd('\r')))
                ?? throw new InvalidDataException($"{source} has no {LimitEchoCounts.Tag} line (limit_echo's client prints one when its run ends)");
            result = LimitEchoCounts.Parse(line, options.ScenarioId);
        }
        catch (Exception e) when (e is InvalidDataException or IOException or UnauthorizedAccessException)
        {
            stderr.WriteLine($"error: {e.Message}");
            return ExitCodes.Usage;
        }

        try
        {
            MergeCommand.Report(result, options, stdout);
        }
        catch (Exception e) when (e is StressHostException or IOException or UnauthorizedAccessException)
        {
            stderr.WriteLine($"error: {e.Message}");
            return ExitCodes.Failure;
        }

        return result.PassFail == "PASS" ? ExitCodes.Pass : ExitCodes.Failure;
    }
}
