// The result of reading the command line of a verb (`compare`, `merge`): its options to run, or
// help text or errors with an exit code.
namespace NetZlink.Stress.Cli;

/// <summary>Either <see cref="Options"/> (run them) or help text or errors.</summary>
/// <typeparam name="TOptions">The verb's options.</typeparam>
internal sealed record VerbParseOutcome<TOptions>
    where TOptions : class
{
    /// <summary>The options to run with; null when the process should just print and exit.</summary>
    public TOptions? Options { get; private init; }

    /// <summary>The exit code when <see cref="Options"/> is null.</summary>
    public int ExitCode { get; private init; }

    /// <summary>Help text for stdout.</summary>
    public string? Text { get; private init; }

    /// <summary>One-line messages for stderr.</summary>
    public IReadOnlyList<string> Errors { get; private init; } = [];

    public static VerbParseOutcome<TOptions> Run(TOptions options) => new() { Options = options };

    public static VerbParseOutcome<TOptions> Help(string text) => new() { ExitCode = ExitCodes.Pass, Text = text };

    public static VerbParseOutcome<TOptions> Usage(IReadOnlyList<string> errors) => new() { ExitCode = ExitCodes.Usage, Errors = errors };
}
