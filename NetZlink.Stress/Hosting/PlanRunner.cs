// --role both and --role client: runs a plan's runs in order (one for s0-s2, a sweep for s3/s4),
// each with its own server child when the role is both, and prints each result as it comes.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>Runs the client side of a plan and reports every result.</summary>
internal sealed class PlanRunner
{
    private readonly StressInvocation _invocation;
    private readonly ClientRun _runClient;
    private readonly TextWriter _stdout;
    private readonly TextWriter _stderr;
    private readonly Action<ScenarioSettings>? _serverStarting;
    private readonly List<ScenarioResult> _results = [];

    /// <param name="serverStarting">Called just before each server child starts (see <see cref="StressApp"/>).</param>
    public PlanRunner(StressInvocation invocation, ClientRun runClient, TextWriter stdout, TextWriter stderr, Action<ScenarioSettings>? serverStarting = null)
    {
        _invocation = invocation;
        _runClient = runClient;
        _stdout = stdout;
        _stderr = stderr;
        _serverStarting = serverStarting;
    }

    /// <summary>Runs <paramref name="runs"/>; returns 0 if every run passed or was skipped, else 2.</summary>
    public async Task<int> RunAsync(IReadOnlyList<PlannedRun> runs, CancellationToken cancellationToken)
    {
        if (_invocation.MetricsCsvPath is { } csv)
        {
            OutputFiles.EnsureWritable(csv, "--metrics-csv");
        }

        if (_invocation.SummaryJsonPath is { } json)
        {
            OutputFiles.EnsureWritable(json, "--summary-json");
        }

        if (_invocation.TimeseriesCsvPath is { } timeseries)
        {
            OutputFiles.EnsureWritable(timeseries, "--timeseries-csv");
        }

        int exitCode = ExitCodes.Pass;
        for (int i = 0; i < runs.Count; i++)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                _stderr.WriteLine($"interrupted: {runs.Count - i} of {runs.Count} runs not started");
                return ExitCodes.Failure;
            }

            if (runs.Count > 1 && !_invocation.Quiet)
            {
                _stderr.WriteLine($"run {i + 1}/{runs.Count}: {runs[i].Settings.ScenarioId}");
            }

            ScenarioResult result = await RunOneAsync(runs[i], cancellationToken).ConfigureAwait(false);
            Report(result, asArray: runs.Count > 1);

            if (result.Interrupted || result.PassFail is not ("PASS" or "SKIP"))
            {
                exitCode = ExitCodes.Failure;
            }

            if (result.Interrupted)
            {
                _stderr.WriteLine(i + 1 < runs.Count
                    ? $"interrupted: {runs.Count - i - 1} of {runs.Count} runs not started"
                    : "interrupted");
                break;
            }
        }

        return exitCode;
    }

    /// <summary>Where the client connects to reach a server bound on <paramref name="bindHost"/>.</summary>
    public static string ClientHostFor(string bindHost) => bindHost switch
    {
        "0.0.0.0" or "*" or "" => "127.0.0.1",
        "::" or "[::]" => "::1",
        _ => bindHost,
    };

    private async Task<ScenarioResult> RunOneAsync(PlannedRun run, CancellationToken cancellationToken)
    {
        if (run.SkipReason is not null)
        {
            return new ScenarioResult { Settings = run.Settings, PassFail = "SKIP", Reason = run.SkipReason };
        }

        IProgress<ProgressSnapshot>? progress = _invocation.Quiet ? null : new ProgressPrinter(_stderr);
        using TimeseriesCsvFile? series = _invocation.TimeseriesCsvPath is { } seriesPath ? new TimeseriesCsvFile(seriesPath, progress) : null;
        progress = series ?? progress;
        if (_invocation.Role == StressRole.Client)
        {
            return await _runClient(run.Settings, progress, cancellationToken).ConfigureAwait(false);
        }

        _serverStarting?.Invoke(run.Settings);
        ServerChildProcess server = await ServerChildProcess
            .StartAsync(run.Settings, _invocation.Quiet, _stderr, cancellationToken).ConfigureAwait(false);
        ScenarioResult result;
        await using (server.ConfigureAwait(false))
        {
            ScenarioSettings client = run.Settings with { Host = ClientHostFor(run.Settings.BindHost), Port = server.Port };
            result = await _runClient(client, progress, cancellationToken).ConfigureAwait(false);
        }

        // The child has stopped and printed its own receive-to-send times.
        server.ServerTimes(_stderr)?.ApplyTo(result);
        return result;
    }

    private void Report(ScenarioResult result, bool asArray)
    {
        _stdout.WriteLine(ResultLines.Result(result));
        _stdout.WriteLine(ResultLines.Metric(result));
        _stdout.Flush();

        if (_invocation.MetricsCsvPath is { } csv)
        {
            MetricsCsvFile.Append(csv, result);
        }

        // A sweep rewrites the whole array after every run, so an interrupted sweep still leaves valid JSON.
        _results.Add(result);
        if (_invocation.SummaryJsonPath is { } json)
        {
            SummaryJsonFile.Write(json, _results, asArray, _invocation.JsonHistogram);
        }
    }
}
