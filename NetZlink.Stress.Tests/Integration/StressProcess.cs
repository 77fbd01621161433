// Runs the real NetZlink.Stress.dll as a child process (`dotnet NetZlink.Stress.dll …`) and
// collects its output, so that exit codes, signals, stdin and the server child are the real ones.
// The process handling is the shared ChildProcess (TestSupport/).
namespace NetZlink.Stress.Tests.Integration;

internal sealed class StressProcess : ChildProcess
{
    private StressProcess(IEnumerable<string> args, string? shellPrefix = null, IReadOnlyDictionary<string, string>? environment = null)
        : base(Describe(args, shellPrefix, environment))
    {
    }

    public static StressProcess Start(params string[] args) => new(args);

    /// <summary>Starts the tool with <paramref name="environment"/> added to (or replacing in) this process's own.</summary>
    public static StressProcess StartWithEnvironment(IReadOnlyDictionary<string, string> environment, params string[] args) => new(args, environment: environment);

    /// <summary>Starts the tool after <paramref name="shellPrefix"/> (e.g. "exec &lt;/dev/null") in a bash that then execs it; the pid stays the tool's.</summary>
    public static StressProcess StartUnderShell(string shellPrefix, params string[] args) => new(args, shellPrefix);

    /// <summary>Runs to the end after <paramref name="shellPrefix"/> (e.g. "ulimit -n 1024") in a bash that then execs the tool.</summary>
    public static async Task<StressProcess> RunUnderShellAsync(string shellPrefix, CancellationToken cancellationToken, params string[] args)
    {
        var run = new StressProcess(args, shellPrefix);
        await run.WaitForExitAsync(cancellationToken);
        return run;
    }

    /// <summary>Runs to the end and returns the finished process.</summary>
    public static Task<StressProcess> RunAsync(CancellationToken cancellationToken, params string[] args)
        => RunWithEnvironmentAsync(new Dictionary<string, string>(), cancellationToken, args);

    /// <summary>Runs to the end with <paramref name="environment"/> added to (or replacing in) this process's own.</summary>
    public static async Task<StressProcess> RunWithEnvironmentAsync(
        IReadOnlyDictionary<string, string> environment, CancellationToken cancellationToken, params string[] args)
    {
        var run = new StressProcess(args, environment: environment);
        await run.WaitForExitAsync(cancellationToken);
        return run;
    }

    /// <summary>Waits for a server's READY line (--role server) and returns the port it names.</summary>
    public async Task<int> WaitForReadyPortAsync(CancellationToken cancellationToken)
    {
        const string Ready = "READY port=";
        string line = await WaitForLineAsync(l => l.StartsWith(Ready, StringComparison.Ordinal), cancellationToken);
        return int.Parse(line[Ready.Length..], CultureInfo.InvariantCulture);
    }

    /// <summary>Processes still running `… --role server … --port <paramref name="port"/> …` (left-over server children).</summary>
    public static IReadOnlyList<int> ServersOnPort(int port) => OnPort("server", port);

    /// <summary>Processes still running `… --role <paramref name="role"/> … --port <paramref name="port"/> …` (left-over children).</summary>
    public static IReadOnlyList<int> OnPort(string role, int port)
    {
        var found = new List<int>();
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out int pid))
            {
                continue;
            }

            string[] argv;
            try
            {
                argv = File.ReadAllText(Path.Combine(dir, "cmdline")).Split('\0');
            }
            catch (IOException)
            {
                continue;
            }
            catch (UnauthorizedAccessException)
            {
                continue;
            }

            string portText = port.ToString(System.Globalization.CultureInfo.InvariantCulture);
            bool server = argv.Zip(argv.Skip(1)).Any(p => p.First == "--role" && p.Second == role);
            bool onPort = argv.Zip(argv.Skip(1)).Any(p => p.First == "--port" && p.Second == portText);
            if (server && onPort)
            {
                found.Add(pid);
            }
        }

        return found;
    }

    /// <summary>`dotnet NetZlink.Stress.dll args`, or under bash after <paramref name="shellPrefix"/>; never marked as a server child.</summary>
    private static ProcessStartInfo Describe(IEnumerable<string> args, string? shellPrefix, IReadOnlyDictionary<string, string>? environment)
    {
        // bash -c '<prefix>; exec "$0" "$@"' dotnet NetZlink.Stress.dll …: the prefix (ulimit) then the same process.
        IEnumerable<string> tool = [typeof(StressApp).Assembly.Location, .. args];
        ProcessStartInfo info = shellPrefix is null
            ? Describe(DotnetHost, tool, environment)
            : Describe("bash", ["-c", shellPrefix + "; exec \"$0\" \"$@\"", DotnetHost, .. tool], environment);
        info.Environment.Remove(ShutdownSignals.ChildVariable);
        return info;
    }
}
