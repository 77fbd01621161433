// `NetZlink.Stress compare …`: parse, find what the stacks need, run, write the reports, print
// where they are. Every failure becomes one "error: …" line and an exit code, as for a single run.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Reports;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>The compare verb, minus the process.</summary>
internal static class CompareCommand
{
    /// <summary>The verb that selects this command as the first word.</summary>
    public const string Verb = "compare";

    /// <summary>Runs the words after `compare`; returns the exit code (see <see cref="ExitCodes"/>).</summary>
    public static async Task<int> RunAsync(IReadOnlyList<string> args, TextWriter stdout, TextWriter stderr, CancellationToken cancellationToken)
    {
        stdout = TextWriter.Synchronized(stdout);
        stderr = TextWriter.Synchronized(stderr);
        DateTime started = DateTime.UtcNow;
        VerbParseOutcome<CompareOptions> parsed = CompareCommandLine.Parse(args, started);
        if (parsed.Options is not { } options)
        {
            if (parsed.Text is not null)
            {
                stdout.WriteLine(parsed.Text);
            }

            foreach (string error in parsed.Errors)
            {
                stderr.WriteLine($"error: {error}");
            }

            return parsed.ExitCode;
        }

        try
        {
            string? limitEcho = options.Stacks.Any(s => !CompareStacks.IsDotnetProcess(s)) ? LimitEchoBinary.Locate() : null;
            var skipped = new List<string>();
            if (limitEcho is not null && options.Stacks.Contains(CompareStacks.CUring)
                && await LimitEchoBinary.UringRefusedAsync(limitEcho, cancellationToken).ConfigureAwait(false) is { } refused)
            {
                // Where io_uring is refused (a kernel without it, a sandbox, io_uring_disabled) there is no c-uring row.
                skipped.Add($"{CompareStacks.CUring} skipped: {refused}");
                stderr.WriteLine($"compare: {skipped[^1]}");
                options = options with { Stacks = options.Stacks.Where(s => s != CompareStacks.CUring).ToArray() };
                if (options.Stacks.Count == 0)
                {
                    stderr.WriteLine("error: nothing left to run: --stacks named c-uring only");
                    return ExitCodes.Failure;
                }
            }

            Directory.CreateDirectory(options.OutDirectory);
            IReadOnlyList<CompareRun> runs = await new CompareRunner(options, limitEcho, stderr).RunAsync(cancellationToken).ConfigureAwait(false);
            var report = new CompareReport(options.Settings, options.Stacks, options.Scenarios, runs,
                string.Join(' ', args.Prepend(Verb).Prepend("NetZlink.Stress")), started) { Skipped = skipped };
            (string markdown, string html) = await ReportWriter.WriteAsync(report, options.OutDirectory, stdout).ConfigureAwait(false);
            stdout.WriteLine($"compare: wrote {markdown} and {html}");
            bool complete = runs.Count == options.Runs.Count;
            return complete && runs.All(r => r.Passed) ? ExitCodes.Pass : ExitCodes.Failure;
        }
        catch (Exception e) when (e is StressHostException or IOException or UnauthorizedAccessException or InvalidDataException)
        {
            stderr.WriteLine($"error: {e.Message}");
            return ExitCodes.Failure;
        }
    }
}
