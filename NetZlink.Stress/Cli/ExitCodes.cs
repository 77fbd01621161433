// The process exit codes, the same for every role.
namespace NetZlink.Stress.Cli;

/// <summary>What the process returns.</summary>
internal static class ExitCodes
{
    /// <summary>Every run passed or was skipped; also --help, --version and a server stopped on request.</summary>
    public const int Pass = 0;

    /// <summary>Bad usage: an unknown flag or an invalid value.</summary>
    public const int Usage = 1;

    /// <summary>A run ended FAIL or interrupted, or the environment failed it (port in use, server unreachable).</summary>
    public const int Failure = 2;
}
