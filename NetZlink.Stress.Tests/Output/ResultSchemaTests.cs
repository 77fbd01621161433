// The one result schema: the formats agree with each other, a summary file gives back every field
// the schema stores, `merge` combines every stored field by the rule its row names, and
// docs/scenarios.md's field table shows exactly the schema's rows.

namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class ResultSchemaTests
{
    [Test]
    [CancelAfter(10_000)]
    public void TheFormatsAgree()
    {
        string[] csv = ResultSchema.In(FieldFormats.Csv).Select(f => f.Name).ToArray();
        Assert.Multiple(() =>
        {
            Assert.That(ResultSchema.Fields.Select(f => f.Name), Is.Unique);
            Assert.That(ResultSchema.In(FieldFormats.Json).Select(f => f.Name), Is.EqualTo(csv), "the JSON has the CSV's columns");
            Assert.That(MetricsCsvFile.Header.Split(','), Is.EqualTo(csv));
            Assert.That(ResultSchema.In(FieldFormats.Report).Select(f => f.Name), Is.SubsetOf(csv), "the report reads its columns from summary.json");
            Assert.That(ResultSchema.Fields.Where(f => f.Merge == MergeRule.Histogram).Select(f => f.Name),
                Is.EqualTo(new[] { "p50_us", "p95_us", "p99_us", "p999_us", "max_us", "stdev_us" }), "latency fields carry their unit in every format");
            Assert.That(ResultSchema.Fields.Where(f => f.Type == FieldType.Note).Select(f => f.Name), Is.EqualTo(new[] { "reason" }));
            Assert.That(ResultSchema.In(FieldFormats.Result | FieldFormats.Metric | FieldFormats.Csv)[^1].Name, Is.EqualTo("reason"), "the reason comes last");
            Assert.That(ResultSchema.Fields.Where(f => f.Merge is MergeRule.Histogram or MergeRule.Derived or MergeRule.Judged).Select(f => f.IsStored), Has.All.False,
                "a field computed again after a merge is not read back");
            Assert.That(ResultSchema.Fields.Where(f => f.Merge is not (MergeRule.Histogram or MergeRule.Derived or MergeRule.Judged)).Select(f => f.IsStored), Has.All.True,
                "every field merged from hosts' values is read back");
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ASummaryFileGivesBackEveryStoredField()
    {
        using var temp = new TempDirectory();
        ScenarioResult written = Distinct(host: 1, shared: 7);

        ScenarioResult read = HostSummary.Read(Write(temp, "host.json", written)).Result;

        Assert.Multiple(() =>
        {
            foreach (ResultField field in ResultSchema.Fields.Where(f => f.IsStored))
            {
                Assert.That(field.Read(read).ToString(), Is.EqualTo(field.Read(written).ToString()), field.Name);
            }
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void MergeCombinesEveryStoredFieldByItsRule()
    {
        using var temp = new TempDirectory();
        ScenarioResult a = Distinct(host: 1, shared: 7);
        ScenarioResult b = Distinct(host: 2, shared: 7);
        HostSummary[] hosts = [HostSummary.Read(Write(temp, "a.json", a)), HostSummary.Read(Write(temp, "b.json", b))];

        ScenarioResult merged = HostMerger.Merge(hosts, scenarioId: null, warnings: new List<string>());

        Assert.Multiple(() =>
        {
            foreach (ResultField field in ResultSchema.Fields.Where(f => f.IsStored))
            {
                FieldValue x = field.Read(a), y = field.Read(b);
                string expected = field.Merge switch
                {
                    MergeRule.Sum => FieldValue.Sum(x, y).ToString(),
                    MergeRule.Max => FieldValue.Max(x, y).ToString(),
                    MergeRule.Min => FieldValue.Min(x, y).ToString(),
                    MergeRule.Same => x.ToString(),
                    // The hosts differ, so there is no common value (scenario_id falls back to its default).
                    _ => field.Name == "scenario_id" ? $"{a.Stack}-{a.Settings.Scenario}" : string.Empty,
                };
                Assert.That(field.Read(merged).ToString(), Is.EqualTo(expected), $"{field.Name} ({field.Merge})");
            }

            Assert.That(merged.Sent, Is.EqualTo(a.Sent + b.Sent), "a Sum field, spelled out");
            Assert.That(merged.DrainTimeout, Is.EqualTo(Math.Max(a.DrainTimeout, b.DrainTimeout)), "a Max field, spelled out");
            Assert.That(merged.MeasureStartedAt, Is.EqualTo(Math.Min(a.MeasureStartedAt!.Value, b.MeasureStartedAt!.Value)), "a Min field, spelled out");
            Assert.That(merged.IncompleteRatio, Is.EqualTo((double)(merged.Sent - merged.Recv) / merged.Sent), "derived from the merged counts");
            Assert.That(merged.AllocatedBytesPerPacket, Is.EqualTo((double)(a.AllocatedBytes + b.AllocatedBytes) / (merged.Sent + merged.Recv)));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheDocsFieldTableShowsTheSchema()
    {
        string docs = File.ReadAllText(Path.Combine(RepositoryRoot.Path, "docs", "scenarios.md"));
        string section = docs[docs.IndexOf("### Fields", StringComparison.Ordinal)..];
        string[] rows = section.Split('\n').Where(l => l.StartsWith("| `", StringComparison.Ordinal)).ToArray();
        string[] documented = rows.Select(r => string.Join(" | ", r.Split('|').Skip(1).Take(6).Select(c => c.Trim()))).ToArray();

        Assert.That(documented, Is.EqualTo(ResultSchema.Fields.Select(Describe).ToArray()));
    }

    /// <summary>A field as docs/scenarios.md's table shows it: name, type, unit, decimals, merge, formats.</summary>
    private static string Describe(ResultField f)
    {
        string type = f.Type switch
        {
            FieldType.ErrnoCounts => "errno counts",
            _ => f.Type.ToString().ToLowerInvariant(),
        };
        string decimals = f.Type is FieldType.Decimal or FieldType.Time
            ? f.Decimals < 0 ? "all" : f.Decimals.ToString(CultureInfo.InvariantCulture)
            : "–";
        var formats = new List<string>();
        foreach ((FieldFormats flag, string letter) in new[]
            {
                (FieldFormats.Result, "R"), (FieldFormats.Metric, "M"), (FieldFormats.Csv, "C"), (FieldFormats.Json, "J"),
                (FieldFormats.Report, "P"), (FieldFormats.MergeInput, "I"),
            })
        {
            if (f.In(flag))
            {
                formats.Add(letter);
            }
        }

        return string.Join(" | ", $"`{f.Name}`", type, f.Unit.Length == 0 ? "–" : f.Unit, decimals, f.Merge.ToString().ToLowerInvariant(), string.Join(' ', formats));
    }

    /// <summary>A result whose every stored field has a value of its own: <paramref name="host"/> sets what differs between hosts, <paramref name="shared"/> what must not.</summary>
    private static ScenarioResult Distinct(int host, int shared)
    {
        var result = new ScenarioResult { Settings = new ScenarioSettings(), PassFail = "PASS" };
        int index = 0;
        foreach (ResultField field in ResultSchema.Fields.Where(f => f.IsStored))
        {
            index++;
            int n = field.Merge == MergeRule.Same ? shared * 100 + index : host * 1000 + index;
            FieldValue value = field.Type switch
            {
                FieldType.Integer => FieldValue.Of((long)n),
                FieldType.Decimal => FieldValue.Of(n + 0.25, field.Decimals),
                FieldType.Time => FieldValue.Of((double?)(1_800_000_000 + n + 0.5), field.Decimals),
                FieldType.Flag => FieldValue.Of(host % 2 == 1),
                FieldType.ErrnoCounts => FieldValue.Of(new Dictionary<int, long> { [100 + host] = n, [7] = index }),
                _ => FieldValue.Of($"text-{n}"),
            };
            field.Write!(result, value);
        }

        // Fewer echoes than packets sent, so that incomplete_ratio means something.
        result.Recv = result.Sent - host;
        result.SetLatency(Histograms.Filled(variant: host, count: 100));
        return result;
    }

    private static string Write(TempDirectory temp, string name, ScenarioResult result)
    {
        string path = temp.File(name);
        SummaryJsonFile.Write(path, [result], asArray: false, withHistogram: true);
        return path;
    }
}
