// Runs one compare client to its end: its stdout (RESULT/METRIC) is kept, its stderr progress is
// passed on with a prefix, and a client that outlives its deadline is killed rather than waited for.
using System.ComponentModel;
using System.Diagnostics;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Platform;

namespace NetZlink.Stress.Compare;

/// <summary>A client process run to completion.</summary>
internal static class ClientChildProcess
{
    private const int StderrTailLines = 10;

    /// <summary>The exit code, stdout lines and the last stderr lines of a finished client.</summary>
    public sealed record Outcome(int ExitCode, IReadOnlyList<string> Stdout, IReadOnlyList<string> StderrTail, bool Killed);

    /// <summary>
    /// Starts <paramref name="info"/> and waits for it to exit (or kills it at <paramref name="deadline"/>);
    /// <paramref name="stop"/> sends it SIGTERM, so that it ends its run early and still reports it.
    /// </summary>
    /// <param name="onStdout">Called with each stdout line as it comes (and the process, to answer on its stdin).</param>
    public static async Task<Outcome> RunAsync(
        ProcessStartInfo info, string prefix, TextWriter stderr, TimeSpan deadline, Action<Process, string>? onStdout = null, CancellationToken stop = default)
    {
        var stdout = new List<string>();
        var tail = new Queue<string>();
        using var process = new Process { StartInfo = info };
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is { } line)
            {
                lock (stdout)
                {
                    stdout.Add(line);
                }

                onStdout?.Invoke(process, line);
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not { } line)
            {
                return;
            }

            stderr.WriteLine($"{prefix} {line}");
            lock (tail)
            {
                tail.Enqueue(line);
                if (tail.Count > StderrTailLines)
                {
                    tail.Dequeue();
                }
            }
        };

        try
        {
            // The client's cold-start fields count from here (Platform/ProcessStart).
            info.Environment[ProcessStart.LaunchedAtVariable] = ProcessStart.LaunchedAtNow();
            process.Start();
        }
        catch (Exception e) when (e is Win32Exception or InvalidOperationException)
        {
            throw new StressHostException($"cannot start the client process ({ServerLaunch.Describe(info)}): {e.Message}", e);
        }

        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        bool killed = false;
        using CancellationTokenRegistration terminate = stop.Register(() =>
        {
            if (!process.HasExited)
            {
                _ = Platform.Libc.kill(process.Id, Platform.Libc.SIGTERM);
            }
        });
        try
        {
            await process.WaitForExitAsync(CancellationToken.None).WaitAsync(deadline, CancellationToken.None).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            killed = true;
            process.Kill(entireProcessTree: true);
        }

        // Also drains both pipes.
        await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
        lock (stdout)
        {
            lock (tail)
            {
                return new Outcome(process.ExitCode, [.. stdout], [.. tail], killed);
            }
        }
    }
}
