// Combines the runs of several client hosts, all against the same server over the same measured
// seconds, into one result as if one client had made every connection. Each field is merged by its
// ResultSchema rule: settings every host must share are checked (Same), counts and throughput are
// summed, the largest or smallest taken where the table says so; latency comes from the hosts'
// histograms added together (one layout, so the same percentiles one process recording every sample
// would report), derived fields follow from the merged ones, and PASS/FAIL is judged by the
// runner's own rules.
using System.Globalization;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Merge;

/// <summary>Checks that hosts' runs can be merged and merges them.</summary>
internal static class HostMerger
{
    /// <summary>Measured phases that began further apart than this (seconds) get a warning.</summary>
    public const double MeasureStartSpreadWarning = 1.0;

    /// <summary>The model is no field of its own, but open-model latency counts from due times and closed-loop from send times: not one distribution.</summary>
    private const string ModelName = "model";

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
        CheckNoCopies(hosts);

        var merged = new ScenarioResult { Settings = new ScenarioSettings() };
        foreach (ResultField field in ResultSchema.Fields.Where(f => f.IsStored))
        {
            FieldValue[] values = hosts.Select(h => field.Read(h.Result)).ToArray();
            FieldValue value = field.Merge switch
            {
                MergeRule.Sum => values.Aggregate(FieldValue.Sum),
                MergeRule.Max => values.Aggregate(FieldValue.Max),
                MergeRule.Min => values.Aggregate(FieldValue.Min),
                MergeRule.Common => values.All(v => v.ToString() == values[0].ToString()) && values.All(v => v.IsNull == values[0].IsNull)
                    ? values[0] : Nothing(field),
                // Same: checked alike above.
                _ => values[0],
            };
            field.Write!(merged, value);
        }

        if (scenarioId is not null)
        {
            merged.Settings = merged.Settings with { ScenarioId = scenarioId };
        }

        merged.SetLatency(LatencyHistograms.Merge(hosts.Select(h => h.Result.Latency!)));
        WarnIfPhasesApart(hosts, warnings);

        string[] drained = hosts.Where(h => h.Result.DrainTimeout != 0).Select(h => h.Path).ToArray();
        if (drained.Length > 0)
        {
            merged.Reason = $"packets still outstanding after the drain timeout on {string.Join(", ", drained)}";
        }

        ScenarioRunner.Judge(merged, merged.Settings.Ccu);
        return merged;
    }

    /// <summary>What a Common field is when the hosts differ: no value (a scenario_id then takes its default).</summary>
    private static FieldValue Nothing(ResultField field) => field.Type switch
    {
        FieldType.Time => FieldValue.Of((double?)null, field.Decimals),
        _ => FieldValue.Of((string?)null),
    };

    private static void CheckAlike(IReadOnlyList<HostSummary> hosts)
    {
        ResultField[] same = ResultSchema.Fields.Where(f => f.Merge == MergeRule.Same).ToArray();
        string all = string.Join(", ", same.Select(f => f.Name)) + " and " + ModelName + " (open or closed loop)";
        HostSummary first = hosts[0];
        foreach (HostSummary host in hosts.Skip(1))
        {
            foreach ((string name, Func<ScenarioResult, string> read) in same.Select(f => (f.Name, (Func<ScenarioResult, string>)(r => f.Read(r).ToString())))
                .Append((ModelName, Model)))
            {
                string expected = read(first.Result);
                string actual = read(host.Result);
                if (actual != expected)
                {
                    throw new InvalidDataException(
                        $"cannot merge {host.Path} with {first.Path}: {name} is {actual} there and {expected} here; every host must run the same {all}");
                }
            }
        }
    }

    /// <summary>
    /// Two hosts with the same counts and the same latency histogram are one run given twice (a copy of
    /// a file): merged, every count would be doubled. Hosts of one run may share their start times, never all of these.
    /// </summary>
    private static void CheckNoCopies(IReadOnlyList<HostSummary> hosts)
    {
        ResultField[] counts = ResultSchema.Fields.Where(f => f.IsStored && f.Merge == MergeRule.Sum).ToArray();
        var seen = new Dictionary<string, HostSummary>(StringComparer.Ordinal);
        foreach (HostSummary host in hosts)
        {
            string fingerprint = string.Join('|', counts.Select(f => f.Read(host.Result).ToString()))
                + "|" + LatencyHistograms.ToCounts(host.Result.Latency!);
            if (!seen.TryAdd(fingerprint, host))
            {
                throw new InvalidDataException(
                    $"{host.Path} has the same counts and latency histogram as {seen[fingerprint].Path}: one run given twice (a copy?) would be counted twice; give each host's file once");
            }
        }
    }

    private static string Model(ScenarioResult result) => result.Settings.Rate > 0 ? "open (--rate)" : "closed loop";

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
}
