// --processes N: the client side of one s1/s2 run split over N `--role client` children of this
// program, child i with --shard-index i --shard-count N (its share of --ccu, the remainder spread
// over the first ones) and, for s2, one common --start-at, so that every child connects first and
// all begin their warm-up, and so their measured phase, at the same wall-clock instant. Each child
// writes its --summary-json with --json-histogram into a scratch folder; they are merged exactly as
// the `merge` verb merges hosts (Merge/HostMerger): one result, percentiles from the added histograms.
// A Kubernetes Indexed Job (deploy/k8s/) runs the same children as pods.
using System.Globalization;
using System.Diagnostics;
using NetZlink.Stress.Cli;
using NetZlink.Stress.Compare;
using NetZlink.Stress.Merge;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>Runs one client run over several processes and merges their results.</summary>
internal static class ClientFanOut
{
    /// <summary>The children's command line after the program: --role client, the share, the client flags of <paramref name="s"/>.</summary>
    /// <param name="startAt">--start-at for every child; null: none (s1), or, for s2, <paramref name="startOnStdin"/>.</param>
    public static IReadOnlyList<string> Arguments(ScenarioSettings s, int index, int count, double? startAt, bool startOnStdin, string summaryJson, bool quiet)
    {
        var args = new List<string> { "--role", "client", "--scenario", s.Scenario, "--transport", s.Transport };
        if (s.Servers.Count > 0)
        {
            args.AddRange(["--servers", string.Join(',', s.Servers)]);
        }
        else
        {
            args.AddRange(["--host", s.Host, "--port", I(s.Port)]);
        }

        args.AddRange([
            "--ccu", I(s.Ccu), "--shard-index", I(index), "--shard-count", I(count),
            "--size", I(s.Size), "--inflight", I(s.Inflight), "--warmup", D(s.WarmupSeconds), "--measure", D(s.MeasureSeconds),
            "--drain-timeout", D(s.DrainTimeoutSeconds), "--connect-concurrency", I(s.ConnectConcurrency),
            "--connect-timeout", D(s.ConnectTimeoutSeconds), "--connect-retries", I(s.ConnectRetries),
            "--connect-retry-delay-ms", I(s.ConnectRetryDelayMs), "--hwm", I(s.Hwm), "--sndbuf", I(s.SendBuffer),
            "--rcvbuf", I(s.ReceiveBuffer), "--io-threads", I(s.IoThreads), "--shards", I(s.Shards), "--send-batch", I(s.SendBatch),
            "--latency-sample-rate", I(s.LatencySampleRate),
            "--client-stack", s.ClientStack, "--server-stack", s.ServerStack,
            "--json-histogram", "--summary-json", summaryJson,

            // Its stdin is a pipe this process holds for the child's whole run: its end (this process gone) stops the child.
            "--exit-on-stdin-eof",
        ]);
        ServerLaunch.AddPath(args, "--tls-ca", s.TlsCaFile);
        if (s.Rate > 0)
        {
            // Each child paces its own share: together they offer --rate.
            args.AddRange(["--rate", D(s.Rate * ClientShares.Of(s.Ccu, count, index).Count / s.Ccu)]);
        }

        if (s.ScenarioId is { } id)
        {
            args.AddRange(["--scenario-id", id]);
        }

        if (startAt is { } at)
        {
            args.AddRange(["--start-at", D(at)]);
        }
        else if (startOnStdin)
        {
            args.Add("--start-on-stdin");
        }

        if (quiet)
        {
            args.Add("--quiet");
        }

        return args;
    }

    /// <summary>
    /// Runs <paramref name="count"/> client children of <paramref name="settings"/> (whose Ccu is the
    /// total) and returns their merged result. <paramref name="cancellationToken"/> sends each child
    /// SIGTERM: they end their runs early and the merge is marked interrupted.
    /// </summary>
    /// <exception cref="StressHostException">A child wrote no usable summary (its exit code and last stderr lines named).</exception>
    public static async Task<ScenarioResult> RunAsync(ScenarioSettings settings, int count, bool quiet, TextWriter stderr, CancellationToken cancellationToken)
    {
        // s2 without --start-at: the children say when they are connected, and all are told one
        // start time once the last one is (StartGate); with --start-at, that time, as on several hosts.
        bool gated = settings.Scenario == "s2" && settings.StartAt is null;
        double? startAt = settings.Scenario == "s2" ? settings.StartAt : null;
        if (!quiet)
        {
            stderr.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{count} client processes, {ClientShares.Largest(settings.Ccu, count)} connections each at most; {(gated ? "all start their warm-up together once every one is connected" : startAt is { } at ? $"all start their warm-up at {at:0.###}" : "s1: connect only")}"));
        }

        DirectoryInfo scratch = Directory.CreateTempSubdirectory("netzlink-stress-processes-");
        try
        {
            string[] summaries = Enumerable.Range(0, count)
                .Select(i => Path.Combine(scratch.FullName, string.Create(CultureInfo.InvariantCulture, $"client-{i}.json"))).ToArray();
            TimeSpan deadline = StackLaunch.ClientDeadline(settings) + TimeSpan.FromSeconds(Math.Max(0, (startAt ?? 0) - UnixTime.Now));
            // Only the handshake prints "N of M connected": with --start-at the children start on their own.
            var gate = new StartGate(count, gated && !quiet ? stderr : null);
            ClientChildProcess.Outcome[] outcomes = await Task.WhenAll(Enumerable.Range(0, count).Select(async i =>
            {
                try
                {
                    return await ClientChildProcess.RunAsync(
                        ServerLaunch.ChildStartInfo(Arguments(settings, i, count, startAt, gated, summaries[i], quiet), redirectStdin: true),
                        string.Create(CultureInfo.InvariantCulture, $"[client {i}]"), stderr, deadline, gated ? gate.OnStdout : null, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    // One that ended without connecting must not hold the others back.
                    gate.Release();
                }
            })).ConfigureAwait(false);

            var hosts = new List<HostSummary>();
            for (int i = 0; i < count; i++)
            {
                hosts.Add(Read(summaries[i], i, outcomes[i]));
            }

            // The children's files are named in warnings and reasons by their names alone (client-0.json): the folder is gone after the run.
            string Short(string text) => text.Replace(scratch.FullName + Path.DirectorySeparatorChar, string.Empty, StringComparison.Ordinal);
            var warnings = new List<string>();
            ScenarioResult merged = HostMerger.Merge(hosts, settings.ScenarioId, warnings);
            foreach (string warning in warnings)
            {
                stderr.WriteLine($"warning: {Short(warning)}");
            }

            merged.Reason = merged.Reason is { } reason ? Short(reason) : null;
            return merged;
        }
        finally
        {
            try
            {
                scratch.Delete(recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }

    private static HostSummary Read(string path, int index, ClientChildProcess.Outcome outcome)
    {
        try
        {
            return HostSummary.Read(path);
        }
        catch (InvalidDataException e)
        {
            string how = outcome.Killed ? "was killed at its deadline" : string.Create(CultureInfo.InvariantCulture, $"exited with code {outcome.ExitCode}");
            string tail = outcome.StderrTail.Count == 0 ? "it printed nothing on stderr" : "its stderr: " + string.Join(" | ", outcome.StderrTail);
            throw new StressHostException(string.Create(CultureInfo.InvariantCulture,
                $"client process {index} {how} without a usable summary ({e.Message}); {tail}"), e);
        }
    }

    /// <summary>
    /// The parent's side of --start-on-stdin: counts the children's CONNECTED lines and, at the last
    /// one (or when a child ends without it), tells every child waiting the same start time, a moment ahead.
    /// </summary>
    private sealed class StartGate(int count, TextWriter? notices)
    {
        /// <summary>Seconds between telling the children and their start: time for the line to reach each.</summary>
        private const double Lead = 1.0;

        private readonly Lock _gate = new();
        private readonly List<Process> _waiting = [];
        private int _connected;
        private bool _released;

        public void OnStdout(Process child, string line)
        {
            if (line != StdinStartGate.ConnectedLine)
            {
                return;
            }

            lock (_gate)
            {
                _waiting.Add(child);
                _connected++;
                if (_released)
                {
                    Tell([child], UnixTime.Now);
                }
                else if (_connected == count)
                {
                    ReleaseLocked();
                }
            }
        }

        /// <summary>Starts every child waiting now (a child ended; harmless once released).</summary>
        public void Release()
        {
            lock (_gate)
            {
                if (!_released)
                {
                    ReleaseLocked();
                }
            }
        }

        private void ReleaseLocked()
        {
            _released = true;
            double startAt = UnixTime.Now + Lead;
            notices?.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{_connected} of {count} client processes connected; they start their warm-up at {startAt:0.000}"));
            Tell(_waiting, startAt);
        }

        private static void Tell(IEnumerable<Process> children, double startAt)
        {
            foreach (Process child in children)
            {
                try
                {
                    child.StandardInput.WriteLine(startAt.ToString("R", CultureInfo.InvariantCulture));
                    child.StandardInput.Flush();
                }
                catch (Exception e) when (e is IOException or InvalidOperationException)
                {
                    // It has gone: its summary (or its absence) says what happened.
                }
            }
        }
    }

    private static string I(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string D(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
