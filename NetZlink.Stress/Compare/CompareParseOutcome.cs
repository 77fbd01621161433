// The result of reading a `compare` command line: options to run, or text/errors and an exit code.
using NetZlink.Stress.Cli;

namespace NetZlink.Stress.Compare;

/// <summary>Either <see cref="Options"/> (run them) or help text or errors.</summary>
internal sealed record CompareParseOutcome
{
    public CompareOptions? Options { get; private init; }

    public int ExitCode { get; private init; }

    public string? Text { get; private init; }

    public IReadOnlyList<string> Errors { get; private init; } = [];

    public static CompareParseOutcome Run(CompareOptions options) => new() { Options = options };

    public static CompareParseOutcome Help(string text) => new() { ExitCode = ExitCodes.Pass, Text = text };

    public static CompareParseOutcome Usage(IReadOnlyList<string> errors) => new() { ExitCode = ExitCodes.Usage, Errors = errors };
}
