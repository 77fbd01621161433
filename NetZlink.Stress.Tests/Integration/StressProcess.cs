// Runs the real NetZlink.Stress.dll as a child process (`dotnet NetZlink.Stress.dll …`) and
// collects its output, so that exit codes, signals, stdin and the server child are the real ones.
using System.Diagnostics;
using NetZlink.Stress.Hosting;

namespace NetZlink.Stress.Tests.Integration;

internal sealed class StressProcess : IDisposable
{
    private readonly Process _process;
    private readonly List<string> _stdout = [];
    private readonly List<string> _stderr = [];
    private readonly Lock _gate = new();

    private StressProcess(IEnumerable<string> args, string? shellPrefix = null, IReadOnlyDictionary<string, string>? environment = null)
    {
        var info = new ProcessStartInfo(shellPrefix is null ? DotnetHost : "bash")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        if (shellPrefix is not null)
        {
            // bash -c '<prefix>; exec "$0" "$@"' dotnet NetZlink.Stress.dll …: the prefix (ulimit) then the same process.
            info.ArgumentList.Add("-c");
            info.ArgumentList.Add(shellPrefix + "; exec \"$0\" \"$@\"");
            info.ArgumentList.Add(DotnetHost);
        }

        info.ArgumentList.Add(typeof(StressApp).Assembly.Location);
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }

        info.Environment.Remove(ShutdownSignals.ChildVariable);
        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[name] = value;
        }

        _process = new Process { StartInfo = info };
        _process.OutputDataReceived += (_, e) => Collect(_stdout, e.Data);
        _process.ErrorDataReceived += (_, e) => Collect(_stderr, e.Data);
        _process.Start();
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public int Id => _process.Id;

    public string Stdout => Snapshot(_stdout);

    public string Stderr => Snapshot(_stderr);

    public int ExitCode => _process.ExitCode;

    public bool HasExited => _process.HasExited;

    private static string DotnetHost =>
        Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host
        : Path.GetFileNameWithoutExtension(Environment.ProcessPath) == "dotnet" ? Environment.ProcessPath!
        : "dotnet";

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

    public async Task WaitForExitAsync(CancellationToken cancellationToken)
    {
        // Also waits until both output pipes are read to the end.
        await _process.WaitForExitAsync(cancellationToken);
    }

    /// <summary>Waits for a line on stdout or stderr that <paramref name="match"/> accepts, and returns it.</summary>
    public async Task<string> WaitForLineAsync(Func<string, bool> match, CancellationToken cancellationToken)
    {
        while (true)
        {
            string? line;
            lock (_gate)
            {
                line = _stdout.Concat(_stderr).FirstOrDefault(match);
            }

            if (line is not null)
            {
                return line;
            }

            if (_process.HasExited)
            {
                Assert.Fail($"the process exited ({_process.ExitCode}) first; stdout: {Stdout} stderr: {Stderr}");
            }

            await Task.Delay(50, cancellationToken);
        }
    }

    public void CloseStdin() => _process.StandardInput.Close();

    /// <summary>Sends <paramref name="signal"/> (INT, TERM) to this process only.</summary>
    public void Signal(string signal)
    {
        using var kill = Process.Start("kill", ["-" + signal, _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
    }

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
        }

        _process.Dispose();
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

    private void Collect(List<string> lines, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_gate)
        {
            lines.Add(line);
        }
    }

    private string Snapshot(List<string> lines)
    {
        lock (_gate)
        {
            return string.Join('\n', lines);
        }
    }
}
