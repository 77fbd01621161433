// --role both: the echo server runs in a child process so that each side of 10,000 connections
// fits the 20,000-descriptor limit of one process. The child is stopped on every way out:
//   - DisposeAsync (normal end, exception, Ctrl+C/SIGTERM after the run returns): close its stdin,
//     which it reads to end-of-file (ServerLaunch gives it --exit-on-stdin-eof), wait up to 5 s,
//     then kill its process tree;
//   - AppDomain.ProcessExit (Environment.Exit, the default action of a second signal): kill at once;
//   - the parent killed outright: the kernel closes the stdin pipe and the child stops by itself.
using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>A running `NetZlink.Stress --role server` child that has printed READY.</summary>
internal sealed class ServerChildProcess : IAsyncDisposable
{
    /// <summary>How long the child has to print READY.</summary>
    public static readonly TimeSpan ReadyTimeout = TimeSpan.FromSeconds(30);

    /// <summary>How long the child has to exit after its stdin is closed, before it is killed.</summary>
    public static readonly TimeSpan StopGrace = TimeSpan.FromSeconds(5);

    private const string ReadyPrefix = "READY port=";
    private const int StderrTailLines = 20;

    private readonly Process _process;
    private readonly string _commandLine;
    private readonly TextWriter _stderr;
    private readonly TaskCompletionSource<int> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Queue<string> _stderrTail = new();
    private readonly EventHandler _onProcessExit;
    private readonly int? _index;
    private volatile string? _serverTimeLine;
    private volatile bool _forwardStderr;
    private volatile bool _started;
    private int _stopped;

    private ServerChildProcess(ProcessStartInfo startInfo, TextWriter stderr, int? index)
    {
        _stderr = stderr;
        _index = index;
        _commandLine = ServerLaunch.Describe(startInfo);
        _process = new Process { StartInfo = startInfo, EnableRaisingEvents = true };
        _process.OutputDataReceived += OnStdout;
        _process.ErrorDataReceived += OnStderr;
        _process.Exited += OnExited;
        _onProcessExit = (_, _) => Kill();
    }

    /// <summary>The port the child bound, from its READY line.</summary>
    public int Port { get; private set; }

    /// <summary>The child's process id (its /proc entry gives its memory).</summary>
    public int ProcessId => _process.Id;

    /// <summary>
    /// The SERVER_TIME line the child printed as it stopped (Output/ServerTimeLine), complete once
    /// <see cref="DisposeAsync"/> has returned (it waits for the child's stdout to end); null when it printed none.
    /// </summary>
    public string? ServerTimeLine => _serverTimeLine;

    /// <summary>
    /// The child's times read from <see cref="ServerTimeLine"/>; null when it printed none or an unreadable one
    /// (said on <paramref name="warnings"/>).
    /// </summary>
    public Output.ServerTimeLine? ServerTimes(TextWriter warnings)
    {
        ArgumentNullException.ThrowIfNull(warnings);
        if (_serverTimeLine is not { } line)
        {
            return null;
        }

        try
        {
            return Output.ServerTimeLine.Parse(line);
        }
        catch (InvalidDataException e)
        {
            warnings.WriteLine($"warning: {e.Message}; the run's server_* fields stay 0");
            return null;
        }
    }

    /// <summary>
    /// Starts the child with <paramref name="settings"/>' server flags and waits for its READY line.
    /// </summary>
    /// <exception cref="StressHostException">It could not start, exited first or stayed silent for <see cref="ReadyTimeout"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first.</exception>
    /// <param name="index">Server i of --server-processes (named so in its lines and warnings); null: the one server.</param>
    public static Task<ServerChildProcess> StartAsync(
        ScenarioSettings settings, bool quiet, TextWriter stderr, CancellationToken cancellationToken, int? index = null) =>
        StartAsync(ServerLaunch.StartInfo(settings, quiet), stderr, cancellationToken, index);

    /// <summary>
    /// Starts another echo server program that speaks the same protocol (prints "READY port=N",
    /// stops when its stdin closes), e.g. limit_echo for `compare`; stdin, stdout and stderr must be redirected.
    /// </summary>
    public static async Task<ServerChildProcess> StartAsync(
        ProcessStartInfo startInfo, TextWriter stderr, CancellationToken cancellationToken, int? index = null)
    {
        var child = new ServerChildProcess(startInfo, stderr, index);
        try
        {
            child.Start();
            await child.WaitReadyAsync(cancellationToken).ConfigureAwait(false);
            return child;
        }
        catch
        {
            await child.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Stops the child: stdin closed, <see cref="StopGrace"/> to exit, then killed. Safe to call twice.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _stopped, 1) != 0)
        {
            return;
        }

        AppDomain.CurrentDomain.ProcessExit -= _onProcessExit;
        if (_started)
        {
            try
            {
                _process.StandardInput.Close();
            }
            catch (IOException)
            {
                // Already gone: the pipe is broken.
            }

            if (!await ExitsWithinAsync(StopGrace).ConfigureAwait(false))
            {
                _stderr.WriteLine($"the echo server process {_process.Id} did not stop within {StopGrace.TotalSeconds:F0} s of its stdin closing; killing it");
                Kill();
                await ExitsWithinAsync(StopGrace).ConfigureAwait(false);
            }
        }

        _process.Dispose();
    }

    private void Start()
    {
        AppDomain.CurrentDomain.ProcessExit += _onProcessExit;
        try
        {
            _process.Start();
            _started = true;
        }
        catch (Exception e) when (e is Win32Exception or InvalidOperationException)
        {
            throw new StressHostException($"cannot start the echo server process ({_commandLine}): {e.Message}", e);
        }

        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    private async Task WaitReadyAsync(CancellationToken cancellationToken)
    {
        Task<int> readyLine = _ready.Task;
        Task exited = _process.WaitForExitAsync(CancellationToken.None);
        try
        {
            await Task.WhenAny(readyLine, exited).WaitAsync(ReadyTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            throw new StressHostException(
                $"the echo server process did not print READY within {ReadyTimeout.TotalSeconds:F0} s ({_commandLine}){StderrTail()}");
        }

        if (!readyLine.IsCompletedSuccessfully)
        {
            // WaitForExitAsync has also drained both pipes, so the tail is complete.
            throw new StressHostException(
                $"the echo server process exited with code {_process.ExitCode} before it was ready ({_commandLine}){StderrTail()}");
        }

        Port = readyLine.Result;
        _forwardStderr = true;
    }

    private void OnStdout(object sender, DataReceivedEventArgs e)
    {
        if (e.Data is { } timesLine && timesLine.StartsWith(Output.ServerTimeLine.Tag + " ", StringComparison.Ordinal))
        {
            _serverTimeLine = timesLine;
            return;
        }

        if (e.Data is { } line
            && line.StartsWith(ReadyPrefix, StringComparison.Ordinal)
            && int.TryParse(line.AsSpan(ReadyPrefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out int port))
        {
            _ready.TrySetResult(port);
        }
    }

    private void OnStderr(object sender, DataReceivedEventArgs e)
    {
        if (e.Data is not { } line)
        {
            return;
        }

        if (_forwardStderr)
        {
            _stderr.WriteLine(_index is { } i ? string.Create(CultureInfo.InvariantCulture, $"[server {i}] {line}") : $"[server] {line}");
            return;
        }

        lock (_stderrTail)
        {
            _stderrTail.Enqueue(line);
            if (_stderrTail.Count > StderrTailLines)
            {
                _stderrTail.Dequeue();
            }
        }
    }

    /// <summary>A server that ends before it is told to (killed, crashed) is said once, by name, port and exit code.</summary>
    private void OnExited(object? sender, EventArgs e)
    {
        if (Volatile.Read(ref _stopped) != 0 || !_ready.Task.IsCompletedSuccessfully)
        {
            return;
        }

        string name = _index is { } i ? string.Create(CultureInfo.InvariantCulture, $"server process {i}") : "the echo server process";
        _stderr.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"warning: {name} (port {_ready.Task.Result}) exited with code {_process.ExitCode} during the run"));
    }

    private string StderrTail()
    {
        lock (_stderrTail)
        {
            return _stderrTail.Count == 0 ? "; it printed nothing on stderr" : "; its stderr: " + string.Join(" | ", _stderrTail);
        }
    }

    private async Task<bool> ExitsWithinAsync(TimeSpan grace)
    {
        try
        {
            await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(grace).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    private void Kill()
    {
        try
        {
            if (_started && !_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }
        }
        catch (Exception e) when (e is InvalidOperationException or Win32Exception or NotSupportedException)
        {
            // It exited between the check and the kill, or there is nothing left to kill.
        }
    }
}
