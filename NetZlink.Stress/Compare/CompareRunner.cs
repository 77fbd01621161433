// Runs every (scenario, stack) pair of a compare in turn, each with its own echo server child
// (Hosting/ServerChildProcess: READY handshake, stopped on every way out) and its own client
// child, so that no run shares a process, a port or a warm cache with another. A run that
// cannot start or does not finish is recorded with why, and the compare goes on to the next.
// The .NET stacks' clients write their own files; the limit clients (limit_echo) only print their
// COUNTS line, which is judged and written here by the same rules and writers (LimitEchoCounts).
using System.Globalization;
using System.Text.Json;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.Reports;

namespace NetZlink.Stress.Compare;

/// <summary>Runs the runs of a compare and collects their files.</summary>
internal sealed class CompareRunner
{
    private readonly CompareOptions _options;
    private readonly string? _limitEcho;
    private readonly TextWriter _stderr;

    /// <param name="options">What to run.</param>
    /// <param name="limitEcho">limit_echo's path; needed only when c-epoll or c-uring is among the stacks.</param>
    /// <param name="stderr">Progress: which run, k of n, and the runs' own progress lines.</param>
    public CompareRunner(CompareOptions options, string? limitEcho, TextWriter stderr)
    {
        _options = options;
        _limitEcho = limitEcho;
        _stderr = stderr;
    }

    /// <summary>Runs everything; a cancellation stops before the next run and returns what is done.</summary>
    public async Task<IReadOnlyList<CompareRun>> RunAsync(CancellationToken cancellationToken)
    {
        IReadOnlyList<(string Stack, string Scenario)> pairs = _options.Runs;
        var runs = new List<CompareRun>();
        for (int k = 0; k < pairs.Count; k++)
        {
            (string stack, string scenario) = pairs[k];
            if (cancellationToken.IsCancellationRequested)
            {
                _stderr.WriteLine($"compare: interrupted; {pairs.Count - k} of {pairs.Count} runs not started");
                break;
            }

            _stderr.WriteLine($"compare: run {k + 1}/{pairs.Count}: {stack} {scenario}");
            CompareRun run = SkipReason(stack, scenario) is { } skip
                ? new CompareRun(stack, scenario, null, [], null, skip)
                : await RunOneAsync(stack, scenario, cancellationToken).ConfigureAwait(false);
            runs.Add(run);
            string outcome = run.Summary is { } s
                ? string.Create(CultureInfo.InvariantCulture, $"{s.PassFail} throughput={s.Throughput:F0}/s p99_us={s.P99:F1}")
                : run.Skip is { } reason ? $"SKIP ({reason})" : "no result";
            _stderr.WriteLine($"compare: run {k + 1}/{pairs.Count}: {stack} {scenario}: {outcome}{(run.Error is null ? string.Empty : " (" + run.Error + ")")}");
        }

        return runs;
    }

    /// <summary>Why the netzlink stack cannot run <paramref name="scenario"/>'s transport with this native library; null when it can (or the stack is another).</summary>
    private static string? SkipReason(string stack, string scenario)
    {
        string transport = CompareTransports.Split(scenario).Transport;
        return stack == StackNames.Netzlink && !TransportCatalog.IsAvailable(transport) ? TransportCatalog.UnavailableReason(transport) : null;
    }

    private async Task<CompareRun> RunOneAsync(string stack, string scenario, CancellationToken cancellationToken)
    {
        RunPaths paths = RunPaths.For(_options.OutDirectory, stack, scenario);
        Directory.CreateDirectory(paths.Directory);
        foreach (string stale in new[] { paths.MetricsCsv, paths.SummaryJson, paths.Hgrm, paths.TimeseriesCsv, paths.Stdout })
        {
            // --metrics-csv appends: a rerun into the same folder must not mix rows.
            File.Delete(stale);
        }

        ClientChildProcess.Outcome outcome;
        ServerTimeLine? serverTimes;
        string? serverTimeLine;
        (string clientScenario, ScenarioSettings clientSettings) = _options.ClientRun(scenario);
        // Over tls: a CA and server certificate for this run only, removed when it ends.
        using Tls.RunCertificates? certificates = Tls.TlsEngineSettings.UsesTls(clientSettings) ? Tls.RunCertificates.Create() : null;
        if (certificates is not null)
        {
            clientSettings = clientSettings with
            {
                TlsCertificateFile = certificates.CertificateFile, TlsKeyFile = certificates.KeyFile, TlsCaFile = certificates.CaFile,
            };
        }

        try
        {
            ServerChildProcess server = await ServerChildProcess
                .StartAsync(StackLaunch.Server(stack, certificates is null ? _options.Settings with { Transport = clientSettings.Transport } : clientSettings, _limitEcho), _stderr, cancellationToken)
                .ConfigureAwait(false);
            await using (server.ConfigureAwait(false))
            {
                TimeSpan deadline = StackLaunch.ClientDeadline(_options.Settings);
                outcome = await ClientChildProcess.RunAsync(
                    StackLaunch.Client(stack, clientScenario, clientSettings, server.Port, paths, _options.Quiet, _limitEcho),
                    $"  [{stack} {scenario}]", _stderr, deadline, stop: CancellationToken.None).ConfigureAwait(false);
            }

            // Stopped: its SERVER_TIME line is in.
            serverTimes = server.ServerTimes(_stderr);
            serverTimeLine = server.ServerTimeLine;
        }
        catch (StressHostException e)
        {
            return new CompareRun(stack, scenario, null, [], e.Message);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return new CompareRun(stack, scenario, null, [], "interrupted before the server was ready");
        }

        IReadOnlyList<string> stdout = outcome.Stdout;
        string? countsError = null;
        if (!CompareStacks.IsDotnetProcess(stack) && LimitEchoCounts.Find(stdout) is { } counts)
        {
            try
            {
                string? id = scenario == CompareCommandLine.OpenScenario ? $"{stack}-{CompareCommandLine.OpenScenario}" : null;
                ScenarioResult limitRow = LimitEchoCounts.Parse(counts, id);
                if (limitRow.Stack != stack)
                {
                    // limit_echo --io uring runs on epoll when io_uring is refused: not a c-uring row.
                    throw new InvalidDataException($"limit_echo ran as {limitRow.Stack}, not {stack} (io_uring refused? see its stderr)");
                }

                serverTimes?.ApplyTo(limitRow);
                stdout = [.. stdout, .. WriteLimitRow(limitRow, paths)];
            }
            catch (InvalidDataException e)
            {
                countsError = e.Message;
            }
        }

        else if (serverTimes is not null && File.Exists(paths.SummaryJson))
        {
            // A .NET client wrote its files before its server stopped: add the server's figures.
            AddServerTimes(paths, serverTimes);
        }

        if (serverTimeLine is not null)
        {
            stdout = [.. stdout, serverTimeLine];
        }

        await File.WriteAllLinesAsync(paths.Stdout, stdout, CancellationToken.None).ConfigureAwait(false);
        RunSummary? summary = File.Exists(paths.SummaryJson) ? RunSummary.Read(paths.SummaryJson) : null;
        string wrote = CompareStacks.IsDotnetProcess(stack) ? $"writing {paths.SummaryJson}" : $"printing its {LimitEchoCounts.Tag} line";
        string? error = outcome switch
        {
            { Killed: true } => $"the client did not finish within {StackLaunch.ClientDeadline(_options.Settings).TotalSeconds:F0} s and was killed",
            _ when countsError is not null => countsError,
            _ when summary is null => $"the client exited with code {outcome.ExitCode} without {wrote}"
                + (outcome.StderrTail.Count > 0 ? "; its stderr: " + string.Join(" | ", outcome.StderrTail) : string.Empty),
            _ => null,
        };
        return new CompareRun(stack, scenario, summary, TimeseriesPoint.ReadAll(paths.TimeseriesCsv), error);
    }

    /// <summary>Sets the server_* fields of a .NET client's summary.json (the report's source) from its server's times.</summary>
    private static void AddServerTimes(RunPaths paths, ServerTimeLine serverTimes)
    {
        var figures = new ScenarioResult { Settings = new ScenarioSettings() };
        serverTimes.ApplyTo(figures);
        try
        {
            SummaryJsonFile.Update(paths.SummaryJson, figures, ResultSchema.ServerFields);
        }
        catch (Exception e) when (e is JsonException or InvalidDataException)
        {
            // Left as the client wrote it; the report then says what is wrong with the file.
        }
    }

    /// <summary>Writes the limit row's judged result as a .NET client writes its own; returns its RESULT and METRIC lines.</summary>
    private static string[] WriteLimitRow(ScenarioResult result, RunPaths paths)
    {
        MetricsCsvFile.Append(paths.MetricsCsv, result);
        SummaryJsonFile.Write(paths.SummaryJson, [result], asArray: false);
        return [ResultLines.Result(result), ResultLines.Metric(result)];
    }
}
