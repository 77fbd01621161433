// compare --transports: per-transport runs labelled tls-<scenario>, c-epoll left to tcp, how a tls
// client is launched, and one real compare with tls rows for both .NET stacks.
using NetZlink.Stress.Cli;
using NetZlink.Stress.Compare;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.Tests.Support;

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

    [TestCase(new[] { "--transports", "tcp,ws" }, "--transports takes a comma-separated list of tcp, tls (got 'tcp,ws')")]
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

    [Test]
    [Category("Integration")]
    [CancelAfter(180_000)]
    public async Task ACompareOverTcpAndTlsHasTlsRowsForBothDotnetStacks(CancellationToken cancellationToken)
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }

        using var temp = new TempDirectory();
        string outDir = temp.File("out");
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();

        int exitCode = await CompareCommand.RunAsync(
            ["--out", outDir, "--stacks", "netzlink,dotnet,c-epoll", "--scenarios", "s2", "--transports", "tcp,tls", "--ccu", "4", "--warmup", "0",
                "--measure", "1", "--drain-timeout", "5", "--quiet"],
            stdout, stderr, cancellationToken);

        Assert.That(exitCode, Is.Zero, stderr.ToString());
        string md = await File.ReadAllTextAsync(Path.Combine(outDir, "report.md"), cancellationToken);
        Assert.Multiple(() =>
        {
            foreach (string stack in new[] { "netzlink", "dotnet" })
            {
                RunSummary tls = RunSummary.Read(RunPaths.For(outDir, stack, "tls-s2").SummaryJson);
                Assert.That(tls.Text("scenario_id"), Is.EqualTo($"{stack}-tls-s2"));
                Assert.That(tls.Text("transport"), Is.EqualTo("tls"));
                Assert.That(tls.PassFail, Is.EqualTo("PASS"));
                Assert.That(tls.Number("lost"), Is.Zero);
                Assert.That(tls.Number("recv"), Is.Positive.And.EqualTo(tls.Number("sent")));
            }

            Assert.That(Directory.Exists(Path.Combine(outDir, "c-epoll", "tls-s2")), Is.False, "c-epoll has no tls run");
            Assert.That(stderr.ToString(), Does.Contain("compare: run 5/5: dotnet tls-s2"));
            Assert.That(stdout.ToString(), Does.Contain("RATIOS scenario=tls-s2 ").And.Contain("netzlink/c-epoll_throughput=n/a"));
            Assert.That(md, Does.Contain("| netzlink | tls-s2 |").And.Contain("c-epoll (limit_echo) speaks plain tcp only"));
        });
    }

    private static string Pair(IList<string> args, string flag) => args[args.IndexOf(flag) + 1];
}
