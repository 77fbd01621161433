// The whole program behind Program.cs: parse, pick the role, run, and turn every failure into
// one "error: …" line and an exit code. No stack trace reaches the user.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>Runs one command line; the process entry point minus the process.</summary>
internal sealed class StressApp
{
    private readonly TextWriter _stdout;
    private readonly TextWriter _stderr;
    private readonly ClientRun _runClient;
    private readonly Func<string, bool> _transportAvailable;
    private readonly bool _watchStdin;
    private readonly Action<ScenarioSettings>? _serverStarting;

    /// <param name="stdout">RESULT/METRIC lines, READY, help and version.</param>
    /// <param name="stderr">Progress, notices and errors; written from several threads, so it is synchronized here.</param>
    /// <param name="runClient">The scenario logic; ScenarioRunner.RunClientAsync (warnings to <paramref name="stderr"/>) unless a test stands in.</param>
    /// <param name="transportAvailable">Which transports can run; <see cref="TransportCatalog.IsAvailable"/> unless a test stands in.</param>
    /// <param name="watchStdin">
    /// Whether this process's stdin may be read: with --exit-on-stdin-eof, --role server stops at its end and
    /// --role client takes it as SIGTERM (the real process only).
    /// </param>
    /// <param name="serverStarting">
    /// Called with the settings just before an echo server starts, in this process (--role server) or as the child of
    /// --role both; a test can throw from it to see that nothing started.
    /// </param>
    public StressApp(
        TextWriter stdout,
        TextWriter stderr,
        ClientRun? runClient = null,
        Func<string, bool>? transportAvailable = null,
        bool watchStdin = false,
        Action<ScenarioSettings>? serverStarting = null)
    {
        _stdout = TextWriter.Synchronized(stdout);
        _stderr = TextWriter.Synchronized(stderr);
        _runClient = runClient ?? ((settings, progress, token) => ScenarioRunner.RunClientAsync(settings, progress, _stderr, token));
        _transportAvailable = transportAvailable ?? TransportCatalog.IsAvailable;
        _watchStdin = watchStdin;
        _serverStarting = serverStarting;
    }

    /// <summary>Runs <paramref name="args"/>; returns the exit code (see <see cref="ExitCodes"/>).</summary>
    public async Task<int> RunAsync(IReadOnlyList<string> args, CancellationToken cancellationToken)
    {
        try
        {
            ParseOutcome parsed = CommandLineParsing.Parse(args);
            return parsed.Invocation is { } invocation
                ? await RunAsync(invocation, cancellationToken).ConfigureAwait(false)
                : Print(parsed);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            _stderr.WriteLine("error: interrupted before a result was ready");
            return ExitCodes.Failure;
        }
        catch (ArgumentException e)
        {
            // The runner's word for settings it cannot run with: still a usage problem.
            _stderr.WriteLine($"error: {OneLine(e.Message)}");
            return ExitCodes.Usage;
        }
        catch (Exception e)
        {
            _stderr.WriteLine($"error: {OneLine(Describe(e))}");
            return ExitCodes.Failure;
        }
    }

    private Task<int> RunAsync(StressInvocation invocation, CancellationToken cancellationToken)
    {
        if (invocation.Role != StressRole.Server)
        {
            return invocation.Role == StressRole.Client && _watchStdin && invocation.ExitOnStdinEof
                ? RunUntilStdinEndsAsync(invocation, cancellationToken)
                : RunPlanAsync(invocation, cancellationToken);
        }

        _serverStarting?.Invoke(invocation.Settings);
        return ServerHost.RunAsync(invocation.Settings, invocation.Quiet, _watchStdin && invocation.ExitOnStdinEof, _stdout, _stderr, cancellationToken);
    }

    private Task<int> RunPlanAsync(StressInvocation invocation, CancellationToken cancellationToken) =>
        new PlanRunner(invocation, _runClient, _stdout, _stderr, _serverStarting)
            .RunAsync(SweepPlan.For(invocation, _transportAvailable), cancellationToken);

    /// <summary>
    /// A --processes client child: the end of its stdin (its parent gone, however it went) is taken as
    /// SIGTERM at any point of the run, so that no child runs on without the parent that merges it.
    /// </summary>
    private async Task<int> RunUntilStdinEndsAsync(StressInvocation invocation, CancellationToken cancellationToken)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, StdinEnd.Watch());
        using CancellationTokenRegistration notice = StdinEnd.Watch().Register(() => _stderr.WriteLine("stdin closed (the parent is gone): stopping"));
        return await RunPlanAsync(invocation, stop.Token).ConfigureAwait(false);
    }

    private int Print(ParseOutcome parsed) => ParseMessages.Print(parsed.Text, parsed.Errors, parsed.ExitCode, _stdout, _stderr);

    private static string Describe(Exception e) => e switch
    {
        StressHostException or InvalidOperationException or IOException or UnauthorizedAccessException => e.Message,
        AggregateException { InnerExceptions.Count: 1 } a => Describe(a.InnerExceptions[0]),
        _ => $"{e.Message} ({e.GetType().Name})",
    };

    private static string OneLine(string message) =>
        string.Join(' ', message.Split(['\r', '\n'], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
}
