// Which ends of the echo benchmark this process runs.
namespace NetZlink.Stress.Cli;

/// <summary>The --role values.</summary>
internal enum StressRole
{
    /// <summary>The echo server in a child process plus the client here (the default).</summary>
    Both,

    /// <summary>Only the echo server, until Ctrl+C, SIGTERM or the end of a redirected stdin.</summary>
    Server,

    /// <summary>Only the client, against --host and --port.</summary>
    Client,
}
