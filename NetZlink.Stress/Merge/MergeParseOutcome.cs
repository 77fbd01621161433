// The result of reading a `merge` command line: options to run, or text/errors and an exit code.
using NetZlink.Stress.Cli;

namespace NetZlink.Stress.Merge;

/// <summary>Either <see cref="Options"/> (run them) or help text or errors.</summary>
internal sealed record MergeParseOutcome
{
    public MergeOptions? Options { get; private init; }

    public int ExitCode { get; private init; }

    public string? Text { get; private init; }

    public IReadOnlyList<string> Errors { get; private init; } = [];

    public static MergeParseOutcome Run(MergeOptions options) => new() { Options = options };

    public static MergeParseOutcome Help(string text) => new() { ExitCode = ExitCodes.Pass, Text = text };

    public static MergeParseOutcome Usage(IReadOnlyList<string> errors) => new() { ExitCode = ExitCodes.Usage, Errors = errors };
}
