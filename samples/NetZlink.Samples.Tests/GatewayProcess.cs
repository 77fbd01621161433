// The gateway sample as a child process: started from its built assembly (next to this test's,
// through the project reference), its log lines collected, signalled with kill(1).
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;

namespace NetZlink.Samples.Tests;

internal sealed class GatewayProcess : IDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _lines = new();
    private readonly SemaphoreSlim _lineArrived = new(0);

    private GatewayProcess(Process process)
    {
        _process = process;
        _process.OutputDataReceived += (_, e) => Add(e.Data);
        _process.ErrorDataReceived += (_, e) => Add(e.Data);
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public bool HasExited => _process.HasExited;

    public int ExitCode => _process.ExitCode;

    public string Output => string.Join('\n', _lines);

    public static GatewayProcess Start(params string[] settings)
    {
        string directory = AppContext.BaseDirectory;
        var info = new ProcessStartInfo("dotnet")
        {
            WorkingDirectory = directory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(directory, "NetZlink.Samples.Gateway.dll"));
        foreach (string setting in settings)
        {
            info.ArgumentList.Add(setting);
        }

        info.Environment["DOTNET_ENVIRONMENT"] = "Production";
        return new GatewayProcess(Process.Start(info) ?? throw new InvalidOperationException("dotnet did not start"));
    }

    /// <summary>Waits for a log line matching <paramref name="match"/> and returns it.</summary>
    public async Task<string> WaitForLineAsync(Func<string, bool> match, CancellationToken cancellationToken)
    {
        int seen = 0;
        while (true)
        {
            string[] lines = [.. _lines];
            for (; seen < lines.Length; seen++)
            {
                if (match(lines[seen]))
                {
                    return lines[seen];
                }
            }

            if (_process.HasExited && seen == _lines.Count)
            {
                throw new InvalidOperationException($"the gateway exited ({_process.ExitCode}) before the line was seen:\n{Output}");
            }

            await _lineArrived.WaitAsync(TimeSpan.FromMilliseconds(200), cancellationToken).ConfigureAwait(false);
        }
    }

    public void Signal(string signal)
    {
        using var kill = Process.Start("kill", ["-" + signal, _process.Id.ToString(CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
    }

    public Task WaitForExitAsync(CancellationToken cancellationToken) => _process.WaitForExitAsync(cancellationToken);

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
        finally
        {
            _process.Dispose();
            _lineArrived.Dispose();
        }
    }

    private void Add(string? line)
    {
        if (line is not null)
        {
            _lines.Enqueue(line);
            _lineArrived.Release();
        }
    }
}
