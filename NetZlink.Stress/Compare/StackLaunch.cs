// The command lines of one compare run: the echo server and the client of a stack, both with
// the same scenario settings. The .NET stacks are this program (--role server / --role client),
// c-epoll and c-uring are limit_echo (--io epoll|uring on both sides); each gets only the flags it
// knows, from the same ScenarioSettings.
// limit_echo prints its COUNTS line instead of writing result files (CompareRunner writes them).
using System.Diagnostics;
using System.Globalization;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>Builds the server and client start infos of a stack.</summary>
internal static class StackLaunch
{
    private const string Loopback = "127.0.0.1";

    /// <summary>The server: any free port on the loopback, READY on stdout, stops when stdin closes.</summary>
    public static ProcessStartInfo Server(string stack, ScenarioSettings settings, string? limitEcho)
    {
        if (CompareStacks.IsDotnetProcess(stack))
        {
            return ServerLaunch.StartInfo(ForStack(stack, settings) with { BindHost = Loopback, Port = 0 }, quiet: true);
        }

        ProcessStartInfo info = Redirected(LimitEcho(limitEcho), stdin: true);
        Add(info, "server", "--io", CompareStacks.LimitIo(stack), "--bind-host", Loopback, "--port", "0", "--backlog", I(settings.Backlog),
            "--sndbuf", I(settings.SendBuffer), "--rcvbuf", I(settings.ReceiveBuffer),
            "--latency-sample-rate", I(settings.LatencySampleRate), "--quiet");
        info.Environment[ShutdownSignals.ChildVariable] = "1";
        return info;
    }

    /// <summary>The client of <paramref name="scenario"/> against the server on <paramref name="port"/>.</summary>
    public static ProcessStartInfo Client(
        string stack, string scenario, ScenarioSettings settings, int port, RunPaths paths, bool quiet, string? limitEcho)
    {
        ProcessStartInfo info;
        if (CompareStacks.IsDotnetProcess(stack))
        {
            (string fileName, IReadOnlyList<string> prefix) = ServerLaunch.Program();
            info = Redirected(fileName, stdin: false);
            Add(info, [.. prefix]);
            Add(info, "--role", "client", "--stack", stack, "--hwm", I(settings.Hwm), "--io-threads", I(settings.IoThreads),
                "--shards", I(settings.Shards), "--backlog", I(settings.Backlog));
        }
        else
        {
            info = Redirected(LimitEcho(limitEcho), stdin: false);
            Add(info, "client", "--io", CompareStacks.LimitIo(stack));
        }

        Add(info, "--scenario", scenario, "--host", Loopback, "--port", I(port), "--size", I(settings.Size));
        if (scenario != "s0" || !CompareStacks.IsDotnetProcess(stack))
        {
            // NetZlink.Stress refuses these for s0, which uses one connection and one packet and has no phases.
            Add(info, "--ccu", I(settings.Ccu), "--inflight", I(settings.Inflight),
                "--warmup", D(settings.WarmupSeconds), "--measure", D(settings.MeasureSeconds),
                "--latency-sample-rate", I(settings.LatencySampleRate));
        }

        Add(info, "--drain-timeout", D(settings.DrainTimeoutSeconds),
            "--connect-concurrency", I(settings.ConnectConcurrency), "--connect-timeout", D(settings.ConnectTimeoutSeconds),
            "--connect-retries", I(settings.ConnectRetries), "--connect-retry-delay-ms", I(settings.ConnectRetryDelayMs),
            "--sndbuf", I(settings.SendBuffer), "--rcvbuf", I(settings.ReceiveBuffer), "--send-batch", I(settings.SendBatch),
            "--timeseries-csv", paths.TimeseriesCsv);
        if (CompareStacks.IsDotnetProcess(stack))
        {
            // limit_echo writes no result files: it prints counts, which CompareRunner judges and writes.
            Add(info, "--metrics-csv", paths.MetricsCsv, "--summary-json", paths.SummaryJson);
        }
        string? label = null;
        if (settings.Rate > 0)
        {
            // The open-model run of s2 (compare's s2-open): its id says so in METRIC/CSV/JSON
            // (limit_echo's COUNTS line is given its id when it is judged).
            Add(info, "--rate", D(settings.Rate));
            label = CompareCommandLine.OpenScenario;
        }

        if (settings.Transport != CompareTransports.Tcp)
        {
            // A .NET client only (the limit stacks have no tls runs): the transport, the run's CA, and an id that names the transport.
            Add(info, "--transport", settings.Transport);
            if (settings.TlsCaFile is { } ca)
            {
                Add(info, "--tls-ca", ca);
            }

            label = CompareTransports.Label(settings.Transport, label ?? scenario);
        }

        if (label is not null && CompareStacks.IsDotnetProcess(stack))
        {
            Add(info, "--scenario-id", $"{stack}-{label}");
        }

        if (quiet)
        {
            Add(info, "--quiet");
        }

        return info;
    }

    /// <summary>
    /// How long a client may take at most before it is considered hung; never more than
    /// <see cref="Task.WaitAsync(TimeSpan)"/> can wait (49.7 days), which large --ccu and retry settings could ask for.
    /// </summary>
    public static TimeSpan ClientDeadline(ScenarioSettings s) => TimeSpan.FromSeconds(Math.Min(
        60 + s.WarmupSeconds + s.MeasureSeconds + (3 * s.DrainTimeoutSeconds)
        + ((s.ConnectRetries + 1) * (s.ConnectTimeoutSeconds + (s.ConnectRetryDelayMs / 1000.0)) * Math.Max(1, s.Ccu / Math.Max(1, s.ConnectConcurrency))),
        (uint.MaxValue - 1) / 1000.0));

    private static ScenarioSettings ForStack(string stack, ScenarioSettings settings) =>
        settings with { ClientStack = stack, ServerStack = stack };

    private static string LimitEcho(string? path) =>
        path ?? throw new InvalidOperationException("the c-epoll and c-uring stacks need limit_echo's path (LimitEchoBinary.Locate)");

    private static ProcessStartInfo Redirected(string fileName, bool stdin) => new(fileName)
    {
        RedirectStandardInput = stdin,
        RedirectStandardOutput = true,
        RedirectStandardError = true,
        UseShellExecute = false,
    };

    private static void Add(ProcessStartInfo info, params string[] args)
    {
        foreach (string arg in args)
        {
            info.ArgumentList.Add(arg);
        }
    }

    private static string I(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string D(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
