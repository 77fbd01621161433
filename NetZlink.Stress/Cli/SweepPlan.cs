// The runs one --scenario stands for: s0-s2 are one run each, s3 and s4 are the documented sweeps,
// made of ordinary s0-s2 runs with different settings.
using System.Globalization;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.Tls;

namespace NetZlink.Stress.Cli;

/// <summary>Expands a <see cref="StressInvocation"/> into the runs to do, in order.</summary>
internal static class SweepPlan
{
    /// <summary>The scenarios s4 runs over each transport, in order.</summary>
    public static readonly IReadOnlyList<string> S4Scenarios = ["s0", "s1", "s2"];

    /// <summary>The s3 sweeps: one run per value, every other setting as given.</summary>
    public static readonly IReadOnlyList<ParameterSweep> S3Sweeps =
    [
        new("backlog", [8192, 32768, 65535], (s, v) => s with { Backlog = v }),
        new("hwm", [300000, 1000000, 2000000], (s, v) => s with { Hwm = v }),
        new("sndbuf-rcvbuf", [65536, 262144, 1048576], (s, v) => s with { SendBuffer = v, ReceiveBuffer = v }),
        new("io-threads", [1, 2, 4], (s, v) => s with { IoThreads = v }),
        new("connect-concurrency", [128, 256, 512], (s, v) => s with { ConnectConcurrency = v }),
    ];

    /// <summary>The runs for <paramref name="invocation"/>; runs over a transport that
    /// <paramref name="transportAvailable"/> rejects (for a netzlink end) or that the dotnet stack
    /// lacks carry a skip reason instead of running.</summary>
    public static IReadOnlyList<PlannedRun> For(StressInvocation invocation, Func<string, bool> transportAvailable)
    {
        ScenarioSettings given = invocation.Settings;
        IEnumerable<ScenarioSettings> runs = invocation.Scenario switch
        {
            "s3" => S3Runs(given),
            "s4" => S4Runs(given),
            _ => [given],
        };
        return runs
            .Select(s => new PlannedRun(s, SkipReason(s, transportAvailable) ?? ClientTlsSkipReason(s, invocation.Role)))
            .ToArray();
    }

    /// <summary>Why a run cannot happen here: a dotnet end and a transport it lacks (none of tcp, tls, ws, wss today), or a netzlink
    /// end and a transport the native library lacks; null when it can run.</summary>
    private static string? SkipReason(ScenarioSettings s, Func<string, bool> transportAvailable)
    {
        if (s.ClientStack == StackNames.Dotnet && !TransportCatalog.DotnetSupports(s.Transport, DotnetEnd.Client))
        {
            return TransportCatalog.DotnetUnavailableReason(s.Transport, DotnetEnd.Client);
        }

        if (s.ServerStack == StackNames.Dotnet && !TransportCatalog.DotnetSupports(s.Transport, DotnetEnd.Server))
        {
            return TransportCatalog.DotnetUnavailableReason(s.Transport, DotnetEnd.Server);
        }

        bool netzlinkEnd = s.ClientStack == StackNames.Netzlink || s.ServerStack == StackNames.Netzlink;
        return netzlinkEnd && !transportAvailable(s.Transport) ? TransportCatalog.UnavailableReason(s.Transport) : null;
    }

    /// <summary>An s4 tls or wss run with --role client and no --tls-ca: nothing to verify the server against.</summary>
    private static string? ClientTlsSkipReason(ScenarioSettings s, StressRole role) =>
        role == StressRole.Client && TlsEngineSettings.UsesTls(s) && s.TlsCaFile is null
            ? $"{s.Transport} with --role client needs --tls-ca (the CA the server's certificate is verified against)"
            : null;

    private static IEnumerable<ScenarioSettings> S3Runs(ScenarioSettings given)
    {
        string prefix = given.ScenarioId ?? "s3";
        foreach (ParameterSweep sweep in S3Sweeps)
        {
            foreach (int value in sweep.Values)
            {
                yield return sweep.Apply(given, value) with
                {
                    Scenario = "s2",
                    ScenarioId = string.Create(CultureInfo.InvariantCulture, $"{prefix}-{sweep.Name}-{value}"),
                };
            }
        }
    }

    private static IEnumerable<ScenarioSettings> S4Runs(ScenarioSettings given)
    {
        string prefix = given.ScenarioId ?? "s4";
        foreach (string transport in TransportCatalog.Known)
        {
            foreach (string scenario in S4Scenarios)
            {
                yield return given with
                {
                    Scenario = scenario,
                    Transport = transport,
                    ScenarioId = $"{prefix}-{transport}-{scenario}",
                };
            }
        }
    }
}
