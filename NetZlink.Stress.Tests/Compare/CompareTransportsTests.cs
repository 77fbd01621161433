// compare --transports: per-transport runs labelled tls-<scenario>, c-epoll left to tcp, how a tls
// client is launched, and one real compare with tls rows for both .NET stacks.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class CompareTransportsTests
{
    private static readonly DateTime Now = new(2026, 11, 22, 8, 30, 0, DateTimeKind.Utc);

    [Test]
    public void TransportsAddLabelledRunsAndCEpollStaysOnTcp()
    {
        CompareOptions options = CompareCommandLine.Parse(["--transports", "tls,tcp", "--scenarios", "s0,s2", "--rate", "100"], Now).Options!;

        Assert.Multiple(() =>
        {
            Assert.That(options.Scenarios, Is.EqualTo(new[] { "s0", "s2", "s2-open", "tls-s0", "tls-s2", "tls-s2-open" }));
            Assert.That(options.Runs.Where(r => r.Stack == "c-epoll").Select(r => r.Scenario), Is.EqualTo(new[] { "s0", "s2", "s2-open" }));
            Assert.That(options.Runs.Where(r => r.Stack == "c-uring").Select(r => r.Scenario), Is.EqualTo(new[] { "s0", "s2", "s2-open" }));
            Assert.That(options.Runs.Where(r => r.Stack == "dotnet").Select(r => r.Scenario), Has.Exactly(6).Items);
            Assert.That(options.ClientRun("tls-s2"), Is.EqualTo(("s2", options.Settings with { Transport = "tls", Rate = 0 })));
            Assert.That(options.ClientRun("tls-s2-open"), Is.EqualTo(("s2", options.Settings with { Transport = "tls" })));
            Assert.That(options.ClientRun("s2").Settings.Transport, Is.EqualTo("tcp"));
        });
    }

    [Test]
    public void WsAndWssRunsAreLabelledByTheirTransportAndCEpollHasNone()
    {
        CompareOptions options = CompareCommandLine.Parse(["--transports", "tcp,tls,ws,wss", "--scenarios", "s2"], Now).Options!;

        Assert.Multiple(() =>
        {
            Assert.That(options.Scenarios, Is.EqualTo(new[] { "s2", "tls-s2", "ws-s2", "wss-s2" }));
            Assert.That(options.Runs.Where(r => r.Stack == "c-epoll").Select(r => r.Scenario), Is.EqualTo(new[] { "s2" }));
            Assert.That(options.Runs.Where(r => r.Stack == "netzlink").Select(r => r.Scenario), Is.EqualTo(options.Scenarios));
            Assert.That(CompareTransports.Split("wss-s2"), Is.EqualTo(("wss", "s2")));
            Assert.That(CompareTransports.Split("ws-s2-open"), Is.EqualTo(("ws", "s2-open")));
            Assert.That(options.ClientRun("wss-s2").Settings.Transport, Is.EqualTo("wss"));
            Assert.That(options.ClientRun("ws-s2").Settings.Transport, Is.EqualTo("ws"));
        });
    }

    [Test]
    public void TheTransportCostTableDividesEachTransportByTcpOnTheSameStack()
    {
        using var temp = new TempDirectory();
        CompareReport report = SampleCompare.WithTransports(
            temp,
            ("netzlink", "s2", 1000, 100), ("netzlink", "ws-s2", 500, 200), ("netzlink", "wss-s2", 250, 400),
            ("dotnet", "s2", 800, 100), ("dotnet", "ws-s2", 200, 300));

        ReportTable cost = ReportTables.TransportCostTable(report);
        ReportTable ratios = ReportTables.RatioTable(report);
        Assert.Multiple(() =>
        {
            Assert.That(cost.Rows.Select(r => string.Join(' ', r)), Is.EqualTo(new[]
            {
                "netzlink ws-s2 ws 0.50x 2.00x", "netzlink wss-s2 wss 0.25x 4.00x", "dotnet ws-s2 ws 0.25x 3.00x", "dotnet wss-s2 wss n/a n/a",
            }));
            Assert.That(ratios.Rows.Single(r => r[0] == "ws-s2")[1], Is.EqualTo("2.50x"), "netzlink/dotnet throughput over ws");
            Assert.That(ReportTables.TransportCostTable(SampleCompare.WithTransports(temp, ("netzlink", "s2", 1, 1))).Rows, Is.Empty);
        });
    }

    [Test]
    public void WithoutTransportsACompareIsTcpOnlyAsBefore()
    {
        CompareOptions options = CompareCommandLine.Parse([], Now).Options!;

        Assert.Multiple(() =>
        {
            Assert.That(options.Scenarios, Is.EqualTo(new[] { "s0", "s1", "s2" }));
            Assert.That(options.Runs, Has.Count.EqualTo(12));
            Assert.That(options.Runs.Select(r => options.ClientRun(r.Scenario).Settings.Transport), Has.All.EqualTo("tcp"));
        });
    }

    [TestCase(new[] { "--transports", "tcp,quic" }, "--transports takes a comma-separated list of tcp, tls, ws, wss (got 'tcp,quic')")]
    [TestCase(new[] { "--transports" }, "--transports needs a value")]
    [TestCase(new[] { "--transport", "tls" }, "--transport cannot be given to compare: use --transports")]
    public void BadTransportsAreRefusedWithTheReason(string[] args, string error)
    {
        VerbOutcomes.AssertRefused(CompareCommandLine.Parse(args, Now), Has.Some.StartsWith(error));
    }

    [Test]
    public void ATlsClientGetsTheTransportTheCaAndAnIdNamingTheTransport()
    {
        var settings = new ScenarioSettings { Transport = "tls", TlsCaFile = "/tmp/run/ca.pem" };
        IList<string> args = StackLaunch.Client("dotnet", "s2", settings, 5000, RunPaths.For("out", "dotnet", "tls-s2"), quiet: true, limitEcho: null).ArgumentList;
        IList<string> tcp = StackLaunch.Client("dotnet", "s2", new ScenarioSettings(), 5000, RunPaths.For("out", "dotnet", "s2"), quiet: true, limitEcho: null).ArgumentList;

        Assert.Multiple(() =>
        {
            Assert.That(Pair(args, "--transport"), Is.EqualTo("tls"));
            Assert.That(Pair(args, "--tls-ca"), Is.EqualTo("/tmp/run/ca.pem"));
            Assert.That(Pair(args, "--scenario-id"), Is.EqualTo("dotnet-tls-s2"));
            Assert.That(tcp, Has.None.EqualTo("--transport").And.None.EqualTo("--scenario-id").And.None.EqualTo("--tls-ca"));
        });
    }

    [RequiresStreamClient]
    [Test]
    [Category("Integration")]
    [CancelAfter(180_000)]
    public async Task ACompareOverEveryTransportHasItsRowsForBothDotnetStacks(CancellationToken cancellationToken)
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }

        using InProcessCompare compare = await InProcessCompare.RunAsync(
            ["--stacks", "netzlink,dotnet,c-epoll", "--scenarios", "s2", "--transports", "tcp,tls,ws,wss", "--ccu", "4", "--warmup", "0",
                "--measure", "1", "--drain-timeout", "5", "--quiet"],
            cancellationToken);

        Assert.That(compare.ExitCode, Is.Zero, compare.Stderr);
        string md = await File.ReadAllTextAsync(Path.Combine(compare.OutDir, "report.md"), cancellationToken);
        Assert.Multiple(() =>
        {
            foreach (string transport in new[] { "tls", "ws", "wss" })
            {
                foreach (string stack in new[] { "netzlink", "dotnet" })
                {
                    if (stack == "netzlink" && !NetZlink.Stress.Hosting.TransportCatalog.IsAvailable(transport))
                    {
                        Assert.That(md, Does.Contain($"netzlink {transport}-s2: SKIP (transport {transport} is not available in this native library)."));
                        continue;
                    }

                    RunSummary run = RunSummary.Read(RunPaths.For(compare.OutDir, stack, $"{transport}-s2").SummaryJson);
                    Assert.That(run.Text("scenario_id"), Is.EqualTo($"{stack}-{transport}-s2"));
                    Assert.That(run.Text("transport"), Is.EqualTo(transport));
                    Assert.That(run.PassFail, Is.EqualTo("PASS"), $"{stack} {transport}");
                    Assert.That(run.Number("lost"), Is.Zero);
                    Assert.That(run.Number("recv"), Is.Positive.And.EqualTo(run.Number("sent")));
                    Assert.That(compare.Stdout, Does.Contain($"TRANSPORT_COST stack={stack} scenario={transport}-s2 transport={transport} throughput/tcp="));
                }

                Assert.That(Directory.Exists(Path.Combine(compare.OutDir, "c-epoll", $"{transport}-s2")), Is.False, $"c-epoll has no {transport} run");
                Assert.That(compare.Stdout, Does.Contain($"RATIOS scenario={transport}-s2 ").And.Contain("netzlink/c-epoll_throughput=n/a"));
            }

            Assert.That(compare.Stderr, Does.Contain("compare: run 5/9: dotnet tls-s2"));
            Assert.That(md, Does.Contain("| netzlink | tls-s2 |").And.Contain("c-epoll and c-uring (limit_echo) speak plain tcp only").And.Contain("## Transport cost over tcp"));
        });
    }

    private static string Pair(IList<string> args, string flag) => args[args.IndexOf(flag) + 1];
}
