// How a command line that does not run anything ends: help or version text on stdout, each
// problem as one "error: …" line on stderr, and the parser's exit code. Shared by the verbs.
namespace NetZlink.Stress.Cli;

/// <summary>Prints what a parser returned instead of something to run.</summary>
internal static class ParseMessages
{
    /// <summary>Writes <paramref name="text"/> (if any) and every error; returns <paramref name="exitCode"/>.</summary>
    public static int Print(string? text, IReadOnlyList<string> errors, int exitCode, TextWriter stdout, TextWriter stderr)
    {
        if (text is not null)
        {
            stdout.WriteLine(text);
        }

        foreach (string error in errors)
        {
            stderr.WriteLine($"error: {error}");
        }

        return exitCode;
    }
}
