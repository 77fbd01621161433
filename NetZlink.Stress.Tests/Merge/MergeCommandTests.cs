// The merge verb in process, on hand-made host files: sums, percentiles from the merged histogram,
// the runner's pass rules, re-merging a merged file, and every refusal (different settings,
// unusable files) as exit 1 with one line naming the file and the problem.
using System.Text.Json.Nodes;
using static NetZlink.Stress.Tests.Support.Histograms;

namespace NetZlink.Stress.Tests.Merge;

[TestFixture]
public sealed class MergeCommandTests
{
    [Test]
    [CancelAfter(10_000)]
    public void TwoHostsGiveSummedCountsAndTheMergedHistogramsPercentiles()
    {
        using var temp = new TempDirectory();
        ScenarioResult a = SampleHosts.Host(ccu: 30, seed: 1);
        ScenarioResult b = SampleHosts.Host(ccu: 20, seed: 2);
        a.ErrorsByErrno[111] = 2;
        b.ErrorsByErrno[111] = 1;
        b.ErrorsByErrno[104] = 4;
        b.ConnectFail = 0;
        string json = temp.File("merged.json");
        string csv = temp.File("merged.csv");

        (int code, string stdout, string stderr) = Merge(
            SampleHosts.Write(temp.File("a.json"), a), SampleHosts.Write(temp.File("b.json"), b),
            "--summary-json", json, "--metrics-csv", csv, "--scenario-id", "two-hosts");

        var direct = LatencyHistograms.Merge([a.Latency!, b.Latency!]);
        string result = Line(stdout, "RESULT ");
        string metric = Line(stdout, "METRIC ");
        Assert.Multiple(() =>
        {
            Assert.That(code, Is.Zero, stderr);
            Assert.That(stderr, Is.Empty);
            Assert.That(Number(result, "ccu"), Is.EqualTo(50));
            Assert.That(Number(result, "connect_success"), Is.EqualTo(50));
            Assert.That(Number(result, "sent"), Is.EqualTo(a.Sent + b.Sent));
            Assert.That(Number(result, "recv"), Is.EqualTo(a.Recv + b.Recv));
            Assert.That(Field(result, "throughput"), Is.EqualTo("25000.25"));
            Assert.That(Field(result, "p50_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(50))));
            Assert.That(Field(result, "p95_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(95))));
            Assert.That(Field(result, "p99_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(99))));
            Assert.That(Field(result, "p999_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(99.9))));
            Assert.That(Field(result, "max_us"), Is.EqualTo(Us(direct.GetMaxValue())));
            Assert.That(Field(result, "stdev_us"), Is.EqualTo(Us(direct.GetStdDeviation())));
            Assert.That(Field(result, "hosts"), Is.EqualTo("2"));
            Assert.That(Field(result, "shards"), Is.EqualTo("4"));
            Assert.That(Field(result, "cpu_s"), Is.EqualTo("2.50"));
            Assert.That(Field(result, "peak_rss_mb"), Is.EqualTo("130.0"), "the largest host's");
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Field(metric, "scenario_id"), Is.EqualTo("two-hosts"));
            Assert.That(Field(metric, "errors_by_errno"), Is.EqualTo("104:4;111:3"));
            Assert.That(File.ReadAllLines(csv), Has.Length.EqualTo(2));
            Assert.That(File.ReadAllLines(csv)[1], Does.StartWith("two-hosts,tcp,50,30,1024,50,"));
        });

        using JsonDocument written = JsonDocument.Parse(File.ReadAllText(json));
        HistogramBase rebuilt = Histograms.FromSummary(written.RootElement);
        Assert.Multiple(() =>
        {
            Assert.That(Histograms.Buckets(rebuilt), Is.EqualTo(Histograms.Buckets(direct)));
            Assert.That(written.RootElement.GetProperty("hosts").GetInt32(), Is.EqualTo(2));
            Assert.That(written.RootElement.GetProperty(MergeInputJson.Name).GetProperty("start_at").GetDouble(), Is.EqualTo(1_800_000_000));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AMergedFileMergesAgain()
    {
        using var temp = new TempDirectory();
        string ab = temp.File("ab.json");
        Merge(SampleHosts.Write(temp.File("a.json"), SampleHosts.Host(10, 1)), SampleHosts.Write(temp.File("b.json"), SampleHosts.Host(10, 2)), "--summary-json", ab);

        (int code, string stdout, string stderr) = Merge(ab, SampleHosts.Write(temp.File("c.json"), SampleHosts.Host(5, 3)));

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(code, Is.Zero, stderr);
            Assert.That(Field(result, "hosts"), Is.EqualTo("3"));
            Assert.That(Number(result, "ccu"), Is.EqualTo(25));
            Assert.That(Number(result, "recv"), Is.EqualTo(25_000));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheRunnersRulesJudgeTheSums()
    {
        using var temp = new TempDirectory();
        ScenarioResult big = SampleHosts.Host(100, 1);
        ScenarioResult small = SampleHosts.Host(1, 2);
        // 2% incomplete on its own, 0.02% of all: incomplete_ratio is recomputed from the sums.
        small.Sent = 100;
        small.Recv = 98;
        ScenarioResult lossy = SampleHosts.Host(1, 3);
        lossy.Lost = 7;
        lossy.DrainTimeout = 1;
        string bigFile = SampleHosts.Write(temp.File("big.json"), big);

        (int passCode, string passOut, _) = Merge(bigFile, SampleHosts.Write(temp.File("small.json"), small));
        (int failCode, string failOut, _) = Merge(bigFile, SampleHosts.Write(temp.File("lossy.json"), lossy));

        string pass = Line(passOut, "RESULT ");
        string fail = Line(failOut, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(passCode, Is.Zero);
            Assert.That(Field(pass, "incomplete_ratio"), Is.EqualTo((2.0 / 100_100).ToString("F6", System.Globalization.CultureInfo.InvariantCulture)));
            Assert.That(Field(pass, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(failCode, Is.EqualTo(2));
            Assert.That(Field(fail, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Field(fail, "drain_timeout"), Is.EqualTo("1"));
            Assert.That(Field(fail, "lost"), Is.EqualTo("7"));
            Assert.That(Field(fail, "fail_reason"), Is.EqualTo(FailReasons.DrainTimeout));
            Assert.That(Field(fail, "reason"), Does.Contain("lossy.json").And.Contain("7 packets sent and never echoed"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ACopyOfAnInputIsRefusedNamingBothFiles()
    {
        using var temp = new TempDirectory();
        string a = SampleHosts.Write(temp.File("a.json"), SampleHosts.Host(10, 1));
        string copy = temp.File("copy-of-a.json");
        File.Copy(a, copy);

        // Shards of one --processes run share their start times, not their counts and histograms.
        ScenarioResult sibling = SampleHosts.Host(10, 2);
        sibling.MeasureStartedAt = SampleHosts.Host(10, 1).MeasureStartedAt;
        (int siblingCode, _, string siblingErr) = Merge(a, SampleHosts.Write(temp.File("sibling.json"), sibling));
        (int code, string stdout, string stderr) = Merge(a, copy);

        Assert.Multiple(() =>
        {
            Assert.That(siblingCode, Is.Zero, siblingErr);
            Assert.That(code, Is.EqualTo(1));
            Assert.That(stdout, Is.Empty);
            Assert.That(stderr, Does.StartWith($"error: {copy} has the same counts and latency histogram as {a}").And.Contain("counted twice"));
            Assert.That(stderr.TrimEnd().Split('\n'), Has.Length.EqualTo(1));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void MeasuredPhasesFarApartGiveAWarning()
    {
        using var temp = new TempDirectory();
        ScenarioResult late = SampleHosts.Host(10, 2);
        late.MeasureStartedAt += 5;

        (int code, _, string stderr) = Merge(
            SampleHosts.Write(temp.File("a.json"), SampleHosts.Host(10, 1)), SampleHosts.Write(temp.File("late.json"), late));

        Assert.That(code, Is.Zero);
        Assert.That(stderr, Does.StartWith("warning: the hosts' measured phases began 5.0 s apart").And.Contain("late.json last").And.Contain("--start-at"));
    }

    [TestCase("size", "512")]
    [TestCase("inflight", "7")]
    [TestCase("measure_s", "3")]
    [TestCase("scenario", "s0")]
    [TestCase("transport", "tls")]
    [TestCase("stack", "dotnet")]
    [TestCase("latency_sample_rate", "4")]
    [CancelAfter(10_000)]
    public void HostsThatRanDifferentSettingsAreRefused(string what, string value)
    {
        using var temp = new TempDirectory();
        var settings = new ScenarioSettings { Scenario = "s2", Size = 1024, Inflight = 30, MeasureSeconds = 2 };
        var other = what switch
        {
            "size" => settings with { Size = 512 },
            "inflight" => settings with { Inflight = 7 },
            "measure_s" => settings with { MeasureSeconds = 3 },
            "scenario" => settings with { Scenario = "s0" },
            "transport" => settings with { Transport = "tls" },
            "stack" => settings with { ClientStack = StackNames.Dotnet, ServerStack = StackNames.Dotnet },
            _ => settings with { LatencySampleRate = 4 },
        };
        string a = SampleHosts.Write(temp.File("a.json"), SampleHosts.Host(10, 1, settings));
        string b = SampleHosts.Write(temp.File("b.json"), SampleHosts.Host(10, 2, other));

        (int code, string stdout, string stderr) = Merge(a, b);

        Assert.Multiple(() =>
        {
            Assert.That(code, Is.EqualTo(1));
            Assert.That(stdout, Is.Empty);
            Assert.That(stderr.TrimEnd(), Is.EqualTo(
                $"error: cannot merge {b} with {a}: {what} is {value} there and {Expected(what)} here; every host must run the same scenario, transport, inflight, size, stack, measure_s, latency_sample_rate and model (open or closed loop)"));
        });
    }

    [TestCase("missing", "cannot be read: Could not find file")]
    [TestCase("not-json", "is not JSON: ")]
    [TestCase("sweep", "holds an array of 2 runs (the --summary-json of an s3/s4 sweep)")]
    [TestCase("number", "holds a JSON Number, not the object of one run's --summary-json")]
    [TestCase("no-histogram", "has no 'latency_histogram': rerun that client with --json-histogram")]
    [TestCase("merge-input-v1", "'merge_input' has version 1, and this build reads version 3")]
    [TestCase("histogram-text", "latency histogram: not an HdrHistogram log")]
    [TestCase("histogram-layout", "latency histogram: its layout (lowest 1, highest 1000000, 2 digits) is not this build's")]
    [TestCase("bad-count", "'sent' must be a whole number (got \"many\")")]
    [TestCase("bad-errno", "'errors_by_errno' must be errno:count pairs joined by ';' (got \"111\")")]
    [TestCase("directory", "is a directory, not a --summary-json file")]
    [TestCase("no-merge-input", "has no 'merge_input' (its exact counts and settings")]
    [TestCase("negative-count", "'recv' is negative (got -5); a count or a rate is never below 0")]
    [TestCase("negative-rate", "'throughput' is negative")]
    [CancelAfter(10_000)]
    public void UnusableFilesAreRefusedNamingTheFileAndTheProblem(string kind, string problem)
    {
        using var temp = new TempDirectory();
        string good = SampleHosts.Write(temp.File("good.json"), SampleHosts.Host(10, 1));
        string bad = temp.File(kind + ".json");
        switch (kind)
        {
            case "missing":
                break;
            case "directory":
                Directory.CreateDirectory(bad);
                break;
            case "not-json":
                File.WriteAllText(bad, "RESULT scenario=s2 ...");
                break;
            case "sweep":
                SummaryJsonFile.Write(bad, [SampleHosts.Host(10, 2), SampleHosts.Host(10, 3)], asArray: true, withHistogram: true);
                break;
            case "number":
                File.WriteAllText(bad, "42");
                break;
            case "no-histogram":
                SummaryJsonFile.Write(bad, [SampleHosts.Host(10, 2)], asArray: false);
                break;
            default:
                JsonObject json = JsonNode.Parse(File.ReadAllText(good))!.AsObject();
                _ = kind switch
                {
                    "merge-input-v1" => json[MergeInputJson.Name]!["version"] = 1,
                    "histogram-text" => json[MergeInputJson.HistogramName] = "#[Histogram log format version 1.3]\nnot,a,histogram,line\n",
                    "histogram-layout" => json[MergeInputJson.HistogramName] = LatencyHistograms.ToLog(new LongHistogram(1_000_000, 2), DateTime.UnixEpoch),
                    "bad-count" => json["sent"] = "many",
                    "no-merge-input" => json.Remove(MergeInputJson.Name) ? null : json,
                    "negative-count" => json["recv"] = -5,
                    "negative-rate" => json[MergeInputJson.Name]!["throughput"] = -1.5,
                    _ => json["errors_by_errno"] = "111",
                };
                File.WriteAllText(bad, json.ToJsonString());
                break;
        }

        (int code, string stdout, string stderr) = Merge(good, bad);

        Assert.Multiple(() =>
        {
            Assert.That(code, Is.EqualTo(1));
            Assert.That(stdout, Is.Empty);
            Assert.That(stderr, Does.StartWith($"error: {bad}: ").And.Contain(problem));
            Assert.That(stderr.Trim().Split('\n'), Has.Length.EqualTo(1));
        });
    }

    private static string Expected(string what) => what switch
    {
        "size" => "1024",
        "inflight" => "30",
        "measure_s" => "2",
        "scenario" => "s2",
        "transport" => "tcp",
        "stack" => "netzlink",
        _ => "16",
    };

    private static (int Code, string Stdout, string Stderr) Merge(params string[] args)
    {
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int code = MergeCommand.Run(args, stdout, stderr);
        return (code, stdout.ToString(), stderr.ToString());
    }
}
