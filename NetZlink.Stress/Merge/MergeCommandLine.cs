// Reads `NetZlink.Stress merge [--metrics-csv F] [--summary-json F] [--scenario-id ID] a.json b.json …`:
// three flags (as `--flag value` or `--flag=value`), then the hosts' files; `--` ends the flags.
// The `counts` verb (Compare/CountsCommand) takes the same flags and at most one file.
using NetZlink.Stress.Cli;

namespace NetZlink.Stress.Merge;

/// <summary>Turns the words after `merge` into a <see cref="VerbParseOutcome{MergeOptions}"/>.</summary>
internal static class MergeCommandLine
{
    private static readonly string[] ValueFlags = ["--metrics-csv", "--summary-json", "--scenario-id"];

    /// <summary>The help text of `merge --help`.</summary>
    public static string HelpText => string.Join('\n',
        "usage: NetZlink.Stress merge [--metrics-csv PATH] [--summary-json PATH] [--scenario-id ID] HOST.json HOST.json ...",
        "Merges the --summary-json files of several --role client hosts (each run with --json-histogram, the same",
        "scenario, transport, stack, size, inflight, measure and latency-sample-rate) into one result: counts, ccu,",
        "throughput and shards summed, drain_timeout if any host's, latency percentiles from the merged histograms",
        "(exactly those of one process recording every sample), pass_fail judged by the rules of a single run, hosts=N.",
        "Prints RESULT/METRIC lines like a run; the JSON it writes carries the merged histogram, so it can be merged again.",
        "  --metrics-csv PATH   append the merged row to this CSV (header when new)",
        "  --summary-json PATH  write the merged result as JSON",
        "  --scenario-id ID     the merged result's id (default: the hosts' common id, else <stack>-<scenario>)",
        "exit codes: 0 PASS, 1 bad usage or an unusable file, 2 FAIL");

    /// <summary>Parses <paramref name="args"/> (the words after `merge`).</summary>
    public static VerbParseOutcome<MergeOptions> Parse(IReadOnlyList<string> args) =>
        Parse(args, "merge", HelpText, "merge needs the --summary-json files of the hosts to merge (see merge --help)", maxInputs: int.MaxValue);

    /// <summary>
    /// Parses the words after <paramref name="verb"/>: the three flags and the files, of which
    /// there must be at most <paramref name="maxInputs"/>, and at least one unless
    /// <paramref name="noInput"/> is null (then none is fine).
    /// </summary>
    public static VerbParseOutcome<MergeOptions> Parse(IReadOnlyList<string> args, string verb, string helpText, string? noInput, int maxInputs)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        var inputs = new List<string>();
        var errors = new List<string>();
        bool flagsEnded = false;
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            if (flagsEnded || !arg.StartsWith('-') || arg == "-")
            {
                inputs.Add(arg);
                continue;
            }

            if (arg == "--")
            {
                flagsEnded = true;
                continue;
            }

            if (arg is "--help" or "-h")
            {
                return VerbParseOutcome<MergeOptions>.Help(helpText);
            }

            string name = arg.Split('=', 2)[0];
            if (!ValueFlags.Contains(name))
            {
                errors.Add($"{verb} has no flag {name} (see {verb} --help)");
                continue;
            }

            string? value = arg.Length > name.Length ? arg[(name.Length + 1)..]
                : i + 1 < args.Count && !args[i + 1].StartsWith("--", StringComparison.Ordinal) ? args[++i] : null;
            if (string.IsNullOrWhiteSpace(value) || value.Any(char.IsControl))
            {
                errors.Add($"{name} needs a value");
            }
            else if (!values.TryAdd(name, value))
            {
                errors.Add($"{name} is given more than once");
            }
        }

        if (inputs.Count == 0 && noInput is not null)
        {
            errors.Add(noInput);
        }

        if (inputs.Count > maxInputs)
        {
            errors.Add($"{verb} takes at most {maxInputs} file (got {inputs.Count}: {string.Join(' ', inputs)})");
        }

        // One file given twice would count its host twice.
        foreach (IGrouping<string, string> same in inputs.GroupBy(Path.GetFullPath).Where(g => g.Count() > 1))
        {
            errors.Add($"{same.First()} is given {same.Count()} times: each host's file counts once");
        }

        return errors.Count > 0
            ? VerbParseOutcome<MergeOptions>.Usage(errors)
            : VerbParseOutcome<MergeOptions>.Run(new MergeOptions(
                inputs,
                values.GetValueOrDefault("--metrics-csv"),
                values.GetValueOrDefault("--summary-json"),
                values.GetValueOrDefault("--scenario-id")));
    }
}
