// compare --rate: an open-model s2 run (s2-open) per .NET stack beside the closed-loop runs, how
// its client is launched, how the report shows it, and one real compare with it.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class CompareOpenModelTests
{
    private static readonly DateTime Now = new(2026, 11, 22, 8, 30, 0, DateTimeKind.Utc);

    [Test]
    [CancelAfter(10_000)]
    public void RateAddsAnOpenS2RunPerStackAndLeavesTheOthersClosed()
    {
        CompareOptions options = CompareCommandLine.Parse(["--scenarios", "s0,s2", "--rate", "5000"], Now).Options!;

        Assert.Multiple(() =>
        {
            Assert.That(options.Scenarios, Is.EqualTo(new[] { "s0", "s2", "s2-open" }));
            Assert.That(options.Runs, Is.EqualTo(new[]
            {
                ("netzlink", "s0"), ("dotnet", "s0"), ("c-epoll", "s0"), ("c-uring", "s0"),
                ("netzlink", "s2"), ("dotnet", "s2"), ("c-epoll", "s2"), ("c-uring", "s2"),
                ("netzlink", "s2-open"), ("dotnet", "s2-open"), ("c-epoll", "s2-open"), ("c-uring", "s2-open"),
            }));
            Assert.That(options.ClientRun("s2"), Is.EqualTo(("s2", options.Settings with { Rate = 0 })));
            Assert.That(options.ClientRun("s0").Settings.Rate, Is.Zero);
            Assert.That(options.ClientRun("s2-open"), Is.EqualTo(("s2", options.Settings)));
            Assert.That(options.Settings.Rate, Is.EqualTo(5000));
            Assert.That(CompareCommandLine.Parse([], Now).Options!.Scenarios, Does.Not.Contain("s2-open"), "no --rate, no open run");
        });
    }

    [TestCase(new[] { "--rate", "-1" }, "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got -1)")]
    [TestCase(new[] { "--rate", "lots" }, "--rate must be a number: 0 (closed loop) or 0.001..1000000000 packets per second (got 'lots')")]
    [CancelAfter(10_000)]
    public void ABadRateIsRefusedWithTheReason(string[] args, string error)
    {
        VerbOutcomes.AssertRefused(CompareCommandLine.Parse(args, Now), Is.EqualTo(new[] { error }));
    }

    [Test]
    [CancelAfter(10_000)]
    public void OnlyTheOpenRunsClientGetsTheRateAndItsOwnId()
    {
        using var temp = new TempDirectory();
        CompareOptions options = CompareCommandLine.Parse(["--rate", "5000"], Now).Options!;
        (string openScenario, ScenarioSettings openSettings) = options.ClientRun("s2-open");
        (string closedScenario, ScenarioSettings closedSettings) = options.ClientRun("s2");

        IList<string> open = StackLaunch.Client("dotnet", openScenario, openSettings, 1234, RunPaths.For(temp.Path, "dotnet", "s2-open"), true, null).ArgumentList;
        IList<string> closed = StackLaunch.Client("dotnet", closedScenario, closedSettings, 1234, RunPaths.For(temp.Path, "dotnet", "s2"), true, null).ArgumentList;
        IList<string> limit = StackLaunch.Client("c-epoll", openScenario, openSettings, 1234, RunPaths.For(temp.Path, "c-epoll", "s2-open"), true, "/bin/limit_echo").ArgumentList;

        Assert.Multiple(() =>
        {
            Assert.That(Pair(open, "--rate"), Is.EqualTo("5000"));
            Assert.That(Pair(open, "--scenario"), Is.EqualTo("s2"));
            Assert.That(Pair(open, "--scenario-id"), Is.EqualTo("dotnet-s2-open"));
            Assert.That(closed, Does.Not.Contain("--rate").And.Not.Contain("--scenario-id"));
            Assert.That(Pair(limit, "--rate"), Is.EqualTo("5000"), "limit_echo paces s2 the same way");
            Assert.That(limit, Does.Not.Contain("--scenario-id"), "limit_echo has no such flag: its row gets the id when judged");
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheReportShowsTheOpenRowsTheirRateAndLateAndWhatTheyMean()
    {
        using var temp = new TempDirectory();
        CompareReport closed = SampleCompare.Build(temp);
        ScenarioResult open = SampleResults.Pass();
        open = new ScenarioResult
        {
            Settings = open.Settings with { Rate = 2000 },
            Stack = "netzlink",
            ConnectSuccess = 200,
            Sent = 4000,
            Recv = 4000,
            Throughput = 2000,
            P99Us = 900_000,
            Late = 1500,
            CpuSeconds = 0.5,
            PassFail = "PASS",
        };
        string path = temp.File("open.json");
        SummaryJsonFile.Write(path, [open], asArray: false);
        CompareReport report = closed with
        {
            Settings = closed.Settings with { Rate = 2000 },
            Scenarios = [.. closed.Scenarios, "s2-open"],
            Runs = [.. closed.Runs, new CompareRun("netzlink", "s2-open", RunSummary.Read(path), [], null)],
        };

        string md = MarkdownReport.Render(report);
        string[] lines = md.Split('\n');

        Assert.Multiple(() =>
        {
            Assert.That(lines, Has.One.StartsWith("| netzlink | s2-open | 200 |").And.EndsWith("| PASS | 0.00 | 0.50 | 0.0 | 2000.00 | 1500 | n/a | n/a |"),
                "no dotnet s2-open run to take ratios against");
            Assert.That(lines, Has.None.StartsWith("| c-epoll | s2-open |"), "a run that did not happen has no row");
            Assert.That(lines, Has.One.StartsWith("| s2-open | n/a |"));
            Assert.That(md, Does.Contain("s2-open: s2 as an open model at 2000 packets/s"));
            Assert.That(md, Does.Contain("rate (s2-open only) 2000"));
            Assert.That(HtmlReport.Render(report), Does.Contain("s2-open: s2 as an open model at 2000 packets/s"));
        });
    }

    [RequiresStreamClient]
    [Test]
    [Category("Integration")]
    [CancelAfter(120_000)]
    public async Task ACompareWithRateRunsTheOpenModelBesideTheClosedLoop(CancellationToken cancellationToken)
    {
        using InProcessCompare compare = await InProcessCompare.RunAsync(
            ["--stacks", "netzlink,c-epoll", "--scenarios", "s2", "--ccu", "4", "--warmup", "0", "--measure", "1",
                "--drain-timeout", "5", "--rate", "1000", "--quiet"],
            cancellationToken);

        Assert.That(compare.ExitCode, Is.Zero, compare.Stderr);
        RunSummary closed = RunSummary.Read(RunPaths.For(compare.OutDir, "netzlink", "s2").SummaryJson);
        RunSummary open = RunSummary.Read(RunPaths.For(compare.OutDir, "netzlink", "s2-open").SummaryJson);
        RunSummary limit = RunSummary.Read(RunPaths.For(compare.OutDir, "c-epoll", "s2-open").SummaryJson);
        Assert.Multiple(() =>
        {
            Assert.That(closed.Text("rate"), Is.EqualTo("0.00"));
            Assert.That(open.Text("rate"), Is.EqualTo("1000.00"));
            Assert.That(open.Text("scenario_id"), Is.EqualTo("netzlink-s2-open"));
            Assert.That(open.Number("sent"), Is.EqualTo(1000), "rate × measure");
            Assert.That(open.PassFail, Is.EqualTo("PASS"));
            Assert.That(limit.Text("rate"), Is.EqualTo("1000.00"));
            Assert.That(limit.Text("scenario_id"), Is.EqualTo("c-epoll-s2-open"));
            Assert.That(limit.Number("sent"), Is.EqualTo(1000), "rate × measure, in C too");
            Assert.That(limit.PassFail, Is.EqualTo("PASS"));
            Assert.That(compare.Stderr, Does.Contain("compare: run 4/4: c-epoll s2-open"));
            Assert.That(compare.Stdout, Does.Contain("RATIOS scenario=s2-open "));
        });
    }

    /// <summary>The value after <paramref name="flag"/> in a command line.</summary>
    internal static string Pair(IList<string> args, string flag) => args[args.IndexOf(flag) + 1];
}
