// --role both and --role client: runs a plan's runs in order (one for s0-s2, a sweep for s3/s4),
// each with its own server child when the role is both, and prints each result as it comes.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Output;
using NetZlink.Stress.Platform;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.Tls;

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

        if (_invocation.Scenario != "s0")
        {
            // Before any server or client starts: refuse a run the machine's limits cannot hold.
            ConnectionBudget.Ensure(Layout(_invocation));
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

    /// <summary>How <paramref name="invocation"/> spreads its connections over processes and server endpoints on this machine.</summary>
    internal static ConnectionBudget.Layout Layout(StressInvocation invocation)
    {
        ScenarioSettings s = invocation.Settings;
        return invocation.Role == StressRole.Client
            ? new(s.Ccu, invocation.Processes, 0, Math.Max(1, s.Servers.Count), "--processes", "list {0} or more servers with --servers")
            : new(s.Ccu, invocation.Processes, invocation.ServerProcesses, invocation.ServerProcesses, "--processes", "use --server-processes {0} or more");
    }

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
            return await RunClientsAsync(run.Settings, progress, cancellationToken).ConfigureAwait(false);
        }

        // A tls run without --tls-cert/--tls-ca gets a CA and server certificate of its own, removed when it ends.
        using RunCertificates? certificates = TlsEngineSettings.UsesTls(run.Settings) && run.Settings.TlsCertificateFile is null
            ? RunCertificates.Create()
            : null;
        ScenarioSettings settings = certificates is null ? run.Settings : run.Settings with
        {
            TlsCertificateFile = certificates.CertificateFile,
            TlsKeyFile = certificates.KeyFile,
            TlsCaFile = certificates.CaFile,
        };
        _serverStarting?.Invoke(settings);
        ServerGroup servers = await ServerGroup
            .StartAsync(settings, _invocation.ServerProcesses, _invocation.Quiet, _stderr, cancellationToken).ConfigureAwait(false);
        ScenarioResult result;
        await using (servers.ConfigureAwait(false))
        {
            result = await RunClientsAsync(servers.ClientSettings(settings), progress, cancellationToken).ConfigureAwait(false);
            result.ServerRssGrowthBytes = servers.ResidentGrowthBytes();
        }

        // The children have stopped and printed their own receive-to-send times.
        servers.ServerTimes(_stderr)?.ApplyTo(result);
        return result;
    }

    /// <summary>The client side: this process, or --processes children merged into one result.</summary>
    private Task<ScenarioResult> RunClientsAsync(ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, CancellationToken cancellationToken) =>
        _invocation.Processes > 1
            ? ClientFanOut.RunAsync(settings, _invocation.Processes, _invocation.Quiet, _stderr, cancellationToken)
            : _runClient(settings, progress, cancellationToken);

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
