// Combines the runs of several client hosts, all against the same server over the same measured
// seconds, into one result as if one client had made every connection: counts and throughput are
// summed, latency comes from the merged histograms (the same buckets, so the same percentiles one
// process recording every sample would report), and PASS/FAIL is judged by the runner's own rules.
using System.Globalization;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Merge;

/// <summary>Checks that hosts' runs can be merged and merges them.</summary>
internal static class HostMerger
{
    /// <summary>Measured phases that began further apart than this (seconds) get a warning.</summary>
    public const double MeasureStartSpreadWarning = 1.0;

    /// <summary>What every host must have run alike for a sum to mean anything, with how to read it.</summary>
    private static readonly (string Name, Func<ScenarioResult, string> Read)[] MustMatch =
    [
        ("scenario", r => r.Settings.Scenario),
        ("transport", r => r.Settings.Transport),
        ("stack", r => r.Stack),
        ("size", r => Invariant(r.Settings.Size)),
        ("inflight", r => Invariant(r.Settings.Inflight)),
        ("measure", r => r.Settings.MeasureSeconds.ToString("R", CultureInfo.InvariantCulture)),
        // Hosts sampling at different rates would weigh their latencies differently in the merge.
        ("latency-sample-rate", r => Invariant(r.Settings.LatencySampleRate)),
        // Open-model latency counts from due times, closed-loop from send times: not one distribution.
        ("model", r => r.Settings.Rate > 0 ? "open (--rate)" : "closed loop"),
    ];

    /// <summary>
    /// Merges <paramref name="hosts"/> (at least one) into a judged result; <paramref name="scenarioId"/>
    /// names it, else the hosts' common scenario_id, else the default "&lt;stack&gt;-&lt;scenario&gt;".
    /// Warnings (hosts whose measured phases did not line up) go to <paramref name="warnings"/>.
    /// </summary>
    /// <exception cref="InvalidDataException">The hosts ran different settings (named in the message).</exception>
    public static ScenarioResult Merge(IReadOnlyList<HostSummary> hosts, string? scenarioId, ICollection<string> warnings)
    {
        ArgumentOutOfRangeException.ThrowIfZero(hosts.Count);
        CheckAlike(hosts);

        ScenarioResult first = hosts[0].Result;
        int ccu = checked(hosts.Sum(h => h.Result.Settings.Ccu));
        string? commonId = hosts.Select(h => h.Result.Settings.ScenarioId).Distinct().Count() == 1 ? first.Settings.ScenarioId : null;
        double? commonStart = hosts.Select(h => h.Result.Settings.StartAt).Distinct().Count() == 1 ? first.Settings.StartAt : null;
        var merged = new ScenarioResult
        {
            // each host's --rate paced its own connections: together they offered the sum
            Settings = first.Settings with
            {
                Ccu = ccu, ScenarioId = scenarioId ?? commonId, StartAt = commonStart, Rate = hosts.Sum(h => h.Result.Settings.Rate),
            },
            Stack = first.Stack,
            Hosts = checked(hosts.Sum(h => h.Result.Hosts)),
        };

        var latency = LatencyHistograms.Create();
        long allocatedBytes = 0;
        foreach (ScenarioResult r in hosts.Select(h => h.Result))
        {
            merged.ConnectSuccess += r.ConnectSuccess;
            merged.ConnectFail += r.ConnectFail;
            merged.ConnectTimeout += r.ConnectTimeout;
            merged.Sent += r.Sent;
            merged.Recv += r.Recv;
            merged.Throughput += r.Throughput;
            merged.GatingViolation += r.GatingViolation;
            merged.BadEchoes += r.BadEchoes;
            merged.Disconnects += r.Disconnects;
            merged.ProtocolErrors += r.ProtocolErrors;
            merged.Lost += r.Lost;
            merged.Late += r.Late;
            merged.DrainTimeout = Math.Max(merged.DrainTimeout, r.DrainTimeout);
            merged.Interrupted |= r.Interrupted;
            merged.CpuSeconds += r.CpuSeconds;
            merged.PeakRssBytes = Math.Max(merged.PeakRssBytes, r.PeakRssBytes);
            merged.ShardCount += r.ShardCount;
            allocatedBytes += (long)Math.Round(r.AllocatedBytesPerPacket * (r.Sent + r.Recv));
            foreach ((int errno, long count) in r.ErrorsByErrno)
            {
                merged.ErrorsByErrno[errno] = merged.ErrorsByErrno.GetValueOrDefault(errno) + count;
            }

            latency.Add(r.Latency!);
        }

        long packets = merged.Sent + merged.Recv;
        merged.AllocatedBytesPerPacket = packets == 0 ? 0 : (double)allocatedBytes / packets;
        merged.SetLatency(latency);
        merged.MeasureStartedAt = hosts.Min(h => h.Result.MeasureStartedAt);
        WarnIfPhasesApart(hosts, warnings);

        string[] drained = hosts.Where(h => h.Result.DrainTimeout != 0).Select(h => h.Path).ToArray();
        if (drained.Length > 0)
        {
            merged.Reason = $"packets still outstanding after the drain timeout on {string.Join(", ", drained)}";
        }

        ScenarioRunner.Judge(merged, ccu);
        return merged;
    }

    private static void CheckAlike(IReadOnlyList<HostSummary> hosts)
    {
        HostSummary first = hosts[0];
        foreach (HostSummary host in hosts.Skip(1))
        {
            foreach ((string name, Func<ScenarioResult, string> read) in MustMatch)
            {
                string expected = read(first.Result);
                string actual = read(host.Result);
                if (actual != expected)
                {
                    throw new InvalidDataException(
                        $"cannot merge {host.Path} with {first.Path}: {name} is {actual} there and {expected} here; every host must run the same scenario, transport, stack, size, inflight, measure, latency-sample-rate and model (open or closed loop)");
                }
            }
        }
    }

    /// <summary>Summed throughput assumes the hosts measured over the same seconds; say when they did not.</summary>
    private static void WarnIfPhasesApart(IReadOnlyList<HostSummary> hosts, ICollection<string> warnings)
    {
        HostSummary[] measured = hosts.Where(h => h.Result.MeasureStartedAt is not null).OrderBy(h => h.Result.MeasureStartedAt).ToArray();
        if (measured.Length < 2)
        {
            return;
        }

        double spread = measured[^1].Result.MeasureStartedAt!.Value - measured[0].Result.MeasureStartedAt!.Value;
        if (spread > MeasureStartSpreadWarning)
        {
            warnings.Add(string.Create(CultureInfo.InvariantCulture,
                $"the hosts' measured phases began {spread:0.0} s apart ({measured[0].Path} first, {measured[^1].Path} last): the summed throughput counts seconds in which not every host was measuring; start every client with the same --start-at"));
        }
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);
}
