// A program the test runs as a child process: its stdout and stderr collected line by line, a
// line waited for, signals sent with kill(1), stdin closable, and the whole process tree killed
// on Dispose if it is still running. Compiled into every test project (linked from TestSupport/);
// the stress tool's StressProcess and the gateway sample's GatewayProcess are made of it.
using System.Diagnostics;
using System.Globalization;

namespace NetZlink.Testing;

/// <summary>A started child process and what it has printed so far.</summary>
#pragma warning disable CA1852 // derived from in some test projects (StressProcess, GatewayProcess), not in others
internal class ChildProcess : IDisposable
#pragma warning restore CA1852
{
    private readonly Process _process;
    private readonly List<string> _stdout = [];
    private readonly List<string> _stderr = [];
    private readonly List<string> _both = [];
    private readonly Lock _gate = new();
    private readonly SemaphoreSlim _lineArrived = new(0);

    /// <summary>Starts <paramref name="info"/> with its three standard streams redirected.</summary>
    protected ChildProcess(ProcessStartInfo info)
    {
        info.RedirectStandardInput = true;
        info.RedirectStandardOutput = true;
        info.RedirectStandardError = true;
        info.UseShellExecute = false;
        _process = new Process { StartInfo = info };
        _process.OutputDataReceived += (_, e) => Collect(_stdout, e.Data);
        _process.ErrorDataReceived += (_, e) => Collect(_stderr, e.Data);
        _process.Start();
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    /// <summary>The dotnet host running this test (DOTNET_HOST_PATH, this process, or dotnet on PATH).</summary>
    public static string DotnetHost =>
        Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host
        : System.IO.Path.GetFileNameWithoutExtension(Environment.ProcessPath) == "dotnet" ? Environment.ProcessPath!
        : "dotnet";

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    public int ExitCode => _process.ExitCode;

    /// <summary>The stdout lines so far, joined by \n.</summary>
    public string Stdout => Snapshot(_stdout);

    /// <summary>The stderr lines so far, joined by \n.</summary>
    public string Stderr => Snapshot(_stderr);

    /// <summary>Both outputs so far, for an assertion's message.</summary>
    public string Diagnostics => $"stdout: {Stdout}\nstderr: {Stderr}";

    /// <summary>Every line so far, stdout and stderr in the order they arrived, joined by \n.</summary>
    public string Output => Snapshot(_both);

    /// <summary>
    /// Starts <paramref name="program"/> with <paramref name="args"/>; <paramref name="environment"/> is
    /// added to (or replaces in) this process's own, and the names in <paramref name="removeEnvironment"/> are taken out.
    /// </summary>
    public static ChildProcess Start(
        string program,
        IEnumerable<string> args,
        IReadOnlyDictionary<string, string>? environment = null,
        string? workingDirectory = null,
        IEnumerable<string>? removeEnvironment = null)
    {
        ProcessStartInfo info = Describe(program, args);
        if (workingDirectory is not null)
        {
            info.WorkingDirectory = workingDirectory;
        }

        foreach (string name in removeEnvironment ?? [])
        {
            info.Environment.Remove(name);
        }

        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[name] = value;
        }

        return new ChildProcess(info);
    }

    /// <summary>A start for <paramref name="program"/> with <paramref name="args"/> and <paramref name="environment"/> (see <see cref="Start"/>).</summary>
    protected static ProcessStartInfo Describe(string program, IEnumerable<string> args, IReadOnlyDictionary<string, string>? environment = null)
    {
        var info = new ProcessStartInfo(program);
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }

        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[name] = value;
        }

        return info;
    }

    /// <summary>Waits up to <paramref name="timeout"/> for the exit and both output pipes read to the end; false when it still runs.</summary>
    public bool WaitForExit(TimeSpan timeout)
    {
        if (!_process.WaitForExit(timeout))
        {
            return false;
        }

        // The timed wait does not wait for the redirected output to be read; this one does.
        _process.WaitForExit();
        return true;
    }

    /// <summary>Waits for the exit and for both output pipes to be read to the end.</summary>
    public Task WaitForExitAsync(CancellationToken cancellationToken) => _process.WaitForExitAsync(cancellationToken);

    /// <summary>Waits for a line on stdout or stderr that <paramref name="match"/> accepts, and returns it; fails the test if the process exits first.</summary>
    public async Task<string> WaitForLineAsync(Func<string, bool> match, CancellationToken cancellationToken)
    {
        int seen = 0;
        while (true)
        {
            bool exited = _process.HasExited;
            string[] lines;
            lock (_gate)
            {
                lines = [.. _both.Skip(seen)];
            }

            foreach (string line in lines)
            {
                if (match(line))
                {
                    return line;
                }
            }

            seen += lines.Length;
            if (exited)
            {
                // Exited before this look: every line it printed has been read (WaitForExit drains the pipes).
                await _process.WaitForExitAsync(cancellationToken);
                lock (_gate)
                {
                    if (_both.Count == seen)
                    {
                        Assert.Fail($"the process exited ({_process.ExitCode}) before the line was seen; stdout: {Stdout} stderr: {Stderr}");
                    }
                }

                continue;
            }

            await _lineArrived.WaitAsync(TimeSpan.FromMilliseconds(50), cancellationToken);
        }
    }

    public void CloseStdin() => _process.StandardInput.Close();

    /// <summary>Sends <paramref name="signal"/> (INT, TERM, KILL…) to this process only.</summary>
    public void Signal(string signal)
    {
        using var kill = Process.Start("kill", ["-" + signal, _process.Id.ToString(CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
    }

    /// <summary>Kills the whole process tree if it still runs.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Kills the whole process tree if it still runs, and lets go of the process.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
        {
            return;
        }

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
        _lineArrived.Dispose();
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
            _both.Add(line);
        }

        try
        {
            _lineArrived.Release();
        }
        catch (ObjectDisposedException)
        {
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
