// Runs s0, s1 and s2 as a client on either stack (netzlink's sharded engine or plain .NET sockets,
// both behind ILoadDriver) and turns what the stack counted into a ScenarioResult with the documented
// pass rules, the same for both. Phases: connect; (s0, s2 with --start-at) wait for the start
// time; (s2) warm-up, settle, measure, drain; each stack follows the plan's phase on its own threads.
//
// s2 with --rate is an open-model run: each sending phase gets a schedule (LoadPlan.BeginSchedule)
// and the drain also waits for the measured packets that fell due but were held back; those are
// sent then, late, so a server that stalls cannot make the measured set smaller.
using System.Diagnostics;
using System.Globalization;
using HdrHistogram;
using NetZlink.Stress.DotnetStack;

namespace NetZlink.Stress.Scenarios;

/// <summary>Runs one client scenario against an echo server and measures it.</summary>
public static class ScenarioRunner
{
    private static readonly TimeSpan ProgressInterval = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Runs <paramref name="settings"/>.Scenario against Host:Port. Cancellation ends the run early:
    /// the partial result comes back with <see cref="ScenarioResult.Interrupted"/> set, never an exception.
    /// Bad settings or an unusable environment (descriptor limit) throw <see cref="ArgumentException"/>
    /// or <see cref="InvalidOperationException"/> with a message naming the problem.
    /// </summary>
    public static Task<ScenarioResult> RunClientAsync(
        ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, CancellationToken cancellationToken)
        => RunClientAsync(settings, progress, notices: null, clientContext: null, cancellationToken);

    /// <summary>
    /// <see cref="RunClientAsync(ScenarioSettings, IProgress{ProgressSnapshot}?, CancellationToken)"/>,
    /// with warnings (a --start-at that had passed) written to <paramref name="notices"/>.
    /// </summary>
    public static Task<ScenarioResult> RunClientAsync(
        ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, TextWriter? notices, CancellationToken cancellationToken)
        => RunClientAsync(settings, progress, notices, clientContext: null, cancellationToken);

    /// <summary>
    /// The same, with the netzlink client's engine on <paramref name="clientContext"/> (null: its
    /// own). A client stack that stops mid-run (that context terminated, a shard failed) ends the
    /// run at once with a FAIL result (fail_reason client_stopped), never an exception.
    /// </summary>
    internal static async Task<ScenarioResult> RunClientAsync(
        ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, TextWriter? notices, NetZlink.ZlinkContext? clientContext,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(settings);
        Validate(settings);
        bool s0 = settings.Scenario == "s0";
        bool s1 = settings.Scenario == "s1";
        int ccu = s0 ? 1 : settings.Ccu;
        int inflight = s0 ? 1 : settings.Inflight;
        var result = new ScenarioResult { Settings = s0 ? settings with { Ccu = 1, Inflight = 1 } : settings };
        var plan = new LoadPlan(settings.Size, inflight, settings.SendBatch, s0 ? 1 : settings.LatencySampleRate,
            s0 ? 1 : long.MaxValue, verifyPayload: s0, rate: s0 || s1 ? 0 : settings.Rate, connections: ccu);

        TimeSpan cpuAtStart = Process.GetCurrentProcess().TotalProcessorTime;
        long residentAtStart = ProcessStats.ResidentBytes();
        var connecting = Stopwatch.StartNew();
        using ILoadDriver driver = settings.ClientStack == StackNames.Dotnet
            ? (settings.Transport == "tcp" ? DotnetClient.Start(settings, ccu, plan) : DotnetStreamClient.Start(settings, ccu, plan))
            : NetzlinkLoadDriver.Start(settings, ccu, plan, clientContext);
        result.ShardCount = driver.ShardCount;
        var run = new RunState(driver, plan, progress);

        try
        {
            await run.WaitAsync("connect", driver.ConnectsResolved, Timeout.InfiniteTimeSpan, cancellationToken).ConfigureAwait(false);
            result.ConnectSeconds = connecting.Elapsed.TotalSeconds;
            if (!s1 && driver.Totals().Connected > 0)
            {
                if (settings.StartGate is { } gate)
                {
                    double told = await gate(cancellationToken).ConfigureAwait(false);
                    await WaitForStartAsync(run, told, notices, cancellationToken).ConfigureAwait(false);
                }
                else if (settings.StartAt is { } startAt)
                {
                    await WaitForStartAsync(run, startAt, notices, cancellationToken).ConfigureAwait(false);
                }

                if (s0)
                {
                    await RunSingleEchoAsync(run, settings, result, cancellationToken).ConfigureAwait(false);
                }
                else
                {
                    await RunThroughputAsync(run, settings, result, cancellationToken).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            result.Interrupted = true;
        }
        catch (InvalidOperationException) when (driver.Fault is { } fault)
        {
            // The stack stopped under the run: what it counted up to then is still the result,
            // and whatever was outstanding on its connections is lost.
            result.ClientFault = fault.Message;
        }

        plan.Phase = LoadPhase.Done;
        await run.WaitForShardsToSeeAsync(LoadPhase.Done).ConfigureAwait(false);
        Collect(driver, result);
        plan.ColdStart.ApplyTo(result);
        driver.Stop(TimeSpan.FromSeconds(10));
        result.CpuSeconds = (Process.GetCurrentProcess().TotalProcessorTime - cpuAtStart).TotalSeconds;
        result.PeakRssBytes = ProcessStats.PeakResidentBytes();
        result.ClientRssGrowthBytes = Math.Max(0, result.PeakRssBytes - residentAtStart);
        Judge(result, ccu);
        return result;
    }

    private static async Task RunSingleEchoAsync(RunState run, ScenarioSettings settings, ScenarioResult result, CancellationToken cancellationToken)
    {
        var started = Stopwatch.StartNew();
        result.MeasureStartedAt = UnixTime.Now;
        run.Plan.Phase = LoadPhase.Measure;
        // Wait for the outstanding count too: a stack may count the echo a moment before it lowers
        // that count (the dotnet client does), and s0 judges drain_timeout from it right after.
        await run.WaitUntilAsync("echo", () => (run.Totals.ReceivedMeasured >= 1 && run.Totals.InFlight == 0) || run.Totals.BadEchoes > 0,
            TimeSpan.FromSeconds(Math.Max(1, settings.DrainTimeoutSeconds)), cancellationToken).ConfigureAwait(false);
        run.Plan.Phase = LoadPhase.Drain;
        result.DrainTimeout = run.Totals.InFlight > 0 ? 1 : 0;
        double seconds = Math.Max(started.Elapsed.TotalSeconds, 1e-6);
        result.Throughput = run.Totals.ReceivedMeasured / seconds;
    }

    private static async Task RunThroughputAsync(RunState run, ScenarioSettings settings, ScenarioResult result, CancellationToken cancellationToken)
    {
        TimeSpan drainTimeout = TimeSpan.FromSeconds(settings.DrainTimeoutSeconds);
        if (settings.WarmupSeconds > 0)
        {
            run.Plan.BeginSchedule(settings.WarmupSeconds);
            run.Plan.Phase = LoadPhase.Warmup;
            await run.DelayAsync("warmup", TimeSpan.FromSeconds(settings.WarmupSeconds), cancellationToken).ConfigureAwait(false);
            run.Plan.Phase = LoadPhase.Settle;
            if (!await run.WaitUntilAsync("settle", () => run.Totals.InFlight == 0, drainTimeout, cancellationToken).ConfigureAwait(false))
            {
                result.DrainTimeout = 1;
                result.Reason = SettleTimeoutReason(settings.DrainTimeoutSeconds);
            }
        }

        result.MeasureStartedAt = UnixTime.Now;
        run.Plan.BeginSchedule(settings.MeasureSeconds);
        run.Plan.Phase = LoadPhase.Measure;
        var measuring = Stopwatch.StartNew();
        try
        {
            await run.DelayAsync("measure", TimeSpan.FromSeconds(settings.MeasureSeconds), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            // Cut short (interrupted, or the client stopped): the rate over the part that ran.
            result.Throughput = run.Totals.ReceivedMeasured / Math.Max(measuring.Elapsed.TotalSeconds, 1e-6);
            throw;
        }

        // The phase lasted at least what was asked, and a timer that fired late made it longer:
        // the rate divides by what really elapsed.
        double measuredSeconds = measuring.Elapsed.TotalSeconds;
        run.Plan.Phase = LoadPhase.Drain;
        bool open = run.Plan.IsOpen;
        // Open model: every shard must have seen the drain (and counted what it still owes) before its
        // counters are read.
        bool Drained()
        {
            if (open && !run.Driver.HaveAllObserved(LoadPhase.Drain))
            {
                return false;
            }

            LoadTotals t = run.Totals;
            return t.InFlight == 0 && t.Unsent == 0;
        }

        if (!await run.WaitUntilAsync("drain", Drained, drainTimeout, cancellationToken).ConfigureAwait(false))
        {
            LoadTotals t = run.Totals;
            result.DrainTimeout = 1;
            result.Reason = DrainTimeoutReason(t.InFlight, t.Unsent, settings.DrainTimeoutSeconds);
        }

        result.Throughput = settings.MeasureSeconds > 0 ? run.Totals.ReceivedMeasured / ThroughputSeconds(run, settings, measuredSeconds) : 0;
    }

    /// <summary>
    /// The seconds throughput divides by: the measured phase as it ran (never less than asked); in an open-model run, from its start to
    /// the last measured echo if that is longer. The drain sends the measured packets held back, so a
    /// run that fell behind its --rate gets all of them echoed in the end: dividing by the measured
    /// phase alone would report the target rate whatever the pair sustained.
    /// </summary>
    private static double ThroughputSeconds(RunState run, ScenarioSettings settings, double measuredSeconds)
    {
        double seconds = Math.Max(settings.MeasureSeconds, measuredSeconds);
        if (run.Plan.Schedule is { } schedule && run.Totals.LastMeasuredEchoNs > schedule.StartNs)
        {
            seconds = Math.Max(seconds, (run.Totals.LastMeasuredEchoNs - schedule.StartNs) / 1e9);
        }

        return seconds;
    }

    /// <summary>reason= of a run whose warm-up packets were not all back by the drain timeout.</summary>
    internal static string SettleTimeoutReason(double drainTimeoutSeconds) =>
        string.Create(CultureInfo.InvariantCulture, $"warm-up packets still outstanding after the {drainTimeoutSeconds:0.###} s drain timeout");

    /// <summary>reason= of a run whose measured packets were not all back (or, open model, sent) by the drain timeout.</summary>
    internal static string DrainTimeoutReason(long inFlight, long unsent, double drainTimeoutSeconds)
    {
        string held = unsent > 0 ? $" and {unsent} measured packets still not sent (held back by --inflight or a full send queue)" : string.Empty;
        return string.Create(CultureInfo.InvariantCulture, $"{inFlight} packets still outstanding{held} after the {drainTimeoutSeconds:0.###} s drain timeout");
    }

    private static void Collect(ILoadDriver driver, ScenarioResult result)
    {
        Collect(driver.Totals(), driver.ErrorsByErrno(), driver.MergedLatency(), driver.AllocatedDuringMeasure(), result);
        result.ConnectFailureDetail = driver.ConnectFailureDetail();
    }

    /// <summary>
    /// Sets the result's counts from what a client stack counted by the end of the run: the .NET
    /// stacks' drivers, and the c-epoll limit row's COUNTS line (Compare/LimitEchoCounts).
    /// </summary>
    internal static void Collect(LoadTotals totals, IReadOnlyDictionary<int, long> errorsByErrno, HistogramBase latency, long allocatedBytes, ScenarioResult result)
    {
        result.ConnectSuccess = totals.Connected;
        result.ConnectFail = totals.ConnectFailed;
        result.ConnectTimeout = totals.ConnectTimedOut;
        result.Sent = totals.SentMeasured;
        result.Recv = totals.ReceivedMeasured;
        result.GatingViolation = totals.GatingViolations;
        result.BadEchoes = totals.BadEchoes;
        result.Disconnects = totals.PeerClosed;
        result.ProtocolErrors = totals.ProtocolErrors;
        // Dropped with their connections, plus still outstanding now that the run is over.
        result.Lost = totals.Lost + totals.InFlight;
        result.Late = totals.Late;
        result.SetErrorsByErrno(errorsByErrno);
        result.SetLatency(latency);
        result.AllocatedBytes = allocatedBytes;
    }

    /// <summary>fail_reason= picks the first of these that applies: the cause that explains the others.</summary>
    private static readonly string[] FailReasonPriority =
    [
        FailReasons.Interrupted, FailReasons.ClientStopped, FailReasons.ConnectFail, FailReasons.ConnectTimeout, FailReasons.ProtocolError,
        FailReasons.ServerClosed, FailReasons.DrainTimeout, FailReasons.BadEcho, FailReasons.GatingViolation,
        FailReasons.NoEcho, FailReasons.Lost, FailReasons.Incomplete,
    ];

    /// <summary>
    /// Sets PASS/FAIL, reason and fail_reason from the counts by the pass rules (docs/scenarios.md); a merge of
    /// several hosts' results is judged here too, with <paramref name="ccu"/> their sum.
    /// </summary>
    internal static void Judge(ScenarioResult result, int ccu)
    {
        ScenarioSettings s = result.Settings;
        var reasons = new List<string>();
        var causes = new HashSet<string>(StringComparer.Ordinal);
        void Fail(string cause, string text)
        {
            causes.Add(cause);
            reasons.Add(text);
        }

        if (result.Interrupted)
        {
            Fail(FailReasons.Interrupted, "interrupted");
        }

        if (result.ClientFault is { } clientFault)
        {
            Fail(FailReasons.ClientStopped, $"the client stopped mid-run: {clientFault}");
        }

        if (result.ConnectSuccess != ccu)
        {
            Fail(result.ConnectFail > 0 || result.ConnectTimeout == 0 ? FailReasons.ConnectFail : FailReasons.ConnectTimeout,
                $"connected {result.ConnectSuccess} of {ccu} (failed {result.ConnectFail}, timed out {result.ConnectTimeout}){(result.ConnectFailureDetail is { } detail ? $"; {detail}" : "")}");
        }

        if (s.Scenario != "s1")
        {
            if (result.ProtocolErrors != 0)
            {
                Fail(FailReasons.ProtocolError, $"{result.ProtocolErrors} connections closed on a protocol error (an echo's length header was not {s.Size})");
            }

            if (result.Disconnects != 0)
            {
                Fail(FailReasons.ServerClosed, $"the server closed {result.Disconnects} connections during the run");
            }

            if (result.Recv <= 0)
            {
                Fail(FailReasons.NoEcho, "no echo received");
            }

            if (result.IncompleteRatio > 0.01)
            {
                Fail(FailReasons.Incomplete, $"incomplete_ratio {result.IncompleteRatio:0.######} above 0.01");
            }

            if (result.DrainTimeout != 0)
            {
                Fail(FailReasons.DrainTimeout, result.Reason ?? "drain timed out");
            }

            if (result.GatingViolation != 0)
            {
                Fail(FailReasons.GatingViolation, $"{result.GatingViolation} echoes arrived with nothing outstanding");
            }

            if (result.BadEchoes != 0)
            {
                Fail(FailReasons.BadEcho, $"{result.BadEchoes} echoes differed from what was sent");
            }

            if (result.Lost != 0)
            {
                Fail(FailReasons.Lost, $"{result.Lost} packets sent and never echoed");
            }
        }

        result.PassFail = reasons.Count == 0 ? "PASS" : "FAIL";
        result.Reason = reasons.Count == 0 ? null : string.Join("; ", reasons.Distinct());
        result.FailReason = Array.Find(FailReasonPriority, causes.Contains) ?? FailReasons.None;
    }

    /// <summary>
    /// Holds the connected, idle client until <paramref name="startAt"/> so that several client
    /// hosts begin their warm-up (and so their measured phase) together. A time already past
    /// starts at once: the host is late, and says so, but its run is still worth having.
    /// </summary>
    private static async Task WaitForStartAsync(RunState run, double startAt, TextWriter? notices, CancellationToken cancellationToken)
    {
        double late = UnixTime.Now - startAt;
        if (late > 0)
        {
            notices?.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"warning: --start-at {startAt:0.###} had passed {late:0.0} s before this client was connected; starting now, so its measured phase begins later than that of hosts which were on time"));
            return;
        }

        run.StartAt = startAt;
        await run.WaitUntilAsync("wait", () => UnixTime.Now >= startAt, Timeout.InfiniteTimeSpan, cancellationToken).ConfigureAwait(false);
        run.StartAt = null;
    }

    private static void Validate(ScenarioSettings s)
    {
        if (s.Scenario is not ("s0" or "s1" or "s2"))
        {
            throw new ArgumentException($"Scenario '{s.Scenario}' is not one the runner knows (s0, s1, s2).");
        }

        if (s.Ccu < 1)
        {
            throw new ArgumentException($"--ccu must be at least 1 (got {s.Ccu}).");
        }

        if (s.Size < 9)
        {
            throw new ArgumentException($"--size must be at least 9 bytes: the body carries a phase byte and an 8-byte timestamp (got {s.Size}).");
        }

        if (s.Inflight < 1)
        {
            throw new ArgumentException($"--inflight must be at least 1 (got {s.Inflight}).");
        }

        if (s.SendBatch < 1)
        {
            throw new ArgumentException($"--send-batch must be at least 1 (got {s.SendBatch}).");
        }

        if (!StackNames.All.Contains(s.ClientStack) || !StackNames.All.Contains(s.ServerStack))
        {
            throw new ArgumentException($"--client-stack and --server-stack must each be one of {string.Join(", ", StackNames.All)} (got '{s.ClientStack}', '{s.ServerStack}').");
        }

        if (!double.IsFinite(s.Rate) || s.Rate < 0)
        {
            throw new ArgumentException($"--rate must be a non-negative number of packets per second (got {s.Rate}).");
        }

        if (s.Rate > 0 && s.Scenario != "s2")
        {
            throw new ArgumentException($"--rate paces the s2 load only; {s.Scenario} has none to pace (got --rate {s.Rate}).");
        }

        if (s.Port is < 1 or > 65535)
        {
            throw new ArgumentException($"--port must be 1..65535 for a client (got {s.Port}).");
        }
    }

    /// <summary>The client stack, its plan and the progress reporting of one run.</summary>
    private sealed class RunState(ILoadDriver driver, LoadPlan plan, IProgress<ProgressSnapshot>? progress)
    {
        private readonly Stopwatch _sinceReport = Stopwatch.StartNew();
        private long _lastSent;
        private long _lastReceived;

        public LoadPlan Plan => plan;

        /// <summary>The --start-at time being waited for, shown on the progress line as starts_in.</summary>
        public double? StartAt { get; set; }

        public ILoadDriver Driver => driver;

        /// <summary>The stack's counters now.</summary>
        public LoadTotals Totals => driver.Totals();

        public Task<bool> DelayAsync(string phase, TimeSpan duration, CancellationToken cancellationToken)
            => WaitUntilAsync(phase, static () => false, duration, cancellationToken);

        public async Task WaitAsync(string phase, Task task, TimeSpan timeout, CancellationToken cancellationToken)
        {
            await WaitUntilAsync(phase, () => task.IsCompleted, timeout, cancellationToken).ConfigureAwait(false);
            if (driver.Fault is { } fault)
            {
                throw new InvalidOperationException(fault.Message, fault);
            }
        }

        /// <summary>Polls <paramref name="done"/> every 10 ms until true (returns true) or the timeout (false).</summary>
        public async Task<bool> WaitUntilAsync(string phase, Func<bool> done, TimeSpan timeout, CancellationToken cancellationToken)
        {
            var elapsed = Stopwatch.StartNew();
            while (!done())
            {
                if (timeout != Timeout.InfiniteTimeSpan && elapsed.Elapsed >= timeout)
                {
                    return false;
                }

                if (driver.Fault is { } fault)
                {
                    throw new InvalidOperationException(fault.Message, fault);
                }

                await Task.Delay(10, cancellationToken).ConfigureAwait(false);
                Report(phase);
            }

            Report(phase);
            return true;
        }

        public async Task WaitForShardsToSeeAsync(LoadPhase phase)
        {
            var elapsed = Stopwatch.StartNew();
            while (elapsed.Elapsed < TimeSpan.FromSeconds(5) && !driver.HaveAllObserved(phase) && !driver.Stopped)
            {
                await Task.Delay(5).ConfigureAwait(false);
            }
        }

        private void Report(string phase)
        {
            if (progress is null || _sinceReport.Elapsed < ProgressInterval)
            {
                return;
            }

            double seconds = _sinceReport.Elapsed.TotalSeconds;
            _sinceReport.Restart();
            LoadTotals totals = driver.Totals();
            progress.Report(new ProgressSnapshot(
                phase,
                totals.Connected - totals.Disconnected,
                (totals.SentTotal - _lastSent) / seconds,
                (totals.ReceivedTotal - _lastReceived) / seconds,
                totals.InFlight,
                driver.P99UsEstimate(),
                ProcessStats.ResidentBytes() / (1024.0 * 1024.0),
                GC.GetTotalMemory(forceFullCollection: false) / (1024.0 * 1024.0),
                StartAt - UnixTime.Now));
            _lastSent = totals.SentTotal;
            _lastReceived = totals.ReceivedTotal;
        }
    }
}
