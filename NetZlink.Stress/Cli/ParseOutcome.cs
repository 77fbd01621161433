// The result of reading a command line: a run to do, or text to print and an exit code.
namespace NetZlink.Stress.Cli;

/// <summary>Either <see cref="Invocation"/> (run it) or an exit code with help/version text or errors.</summary>
internal sealed record ParseOutcome
{
    /// <summary>The run to do; null when the process should just print and exit.</summary>
    public StressInvocation? Invocation { get; private init; }

    /// <summary>The exit code when <see cref="Invocation"/> is null.</summary>
    public int ExitCode { get; private init; }

    /// <summary>Help or version text for stdout.</summary>
    public string? Text { get; private init; }

    /// <summary>One-line messages for stderr, each printed as "error: …".</summary>
    public IReadOnlyList<string> Errors { get; private init; } = [];

    public static ParseOutcome Run(StressInvocation invocation) => new() { Invocation = invocation };

    public static ParseOutcome Print(string text) => new() { ExitCode = ExitCodes.Pass, Text = text };

    public static ParseOutcome Usage(IReadOnlyList<string> errors) => new() { ExitCode = ExitCodes.Usage, Errors = errors };
}
