// The runs behind each --scenario: one for s0-s2, the 15 s3 sweeps, s4's 12 transport runs.

namespace NetZlink.Stress.Tests.Cli;

[TestFixture]
public sealed class SweepPlanTests
{
    [Test]
    [CancelAfter(10_000)]
    public void S3HasFifteenS2RunsOneValueChangedEach()
    {
        ScenarioSettings given = Invocation("s3").Settings;

        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Invocation("s3"), TcpOnly);

        var expected = new (string Id, ScenarioSettings Settings)[]
        {
            ("s3-backlog-8192", given with { Backlog = 8192 }),
            ("s3-backlog-32768", given with { Backlog = 32768 }),
            ("s3-backlog-65535", given with { Backlog = 65535 }),
            ("s3-hwm-300000", given with { Hwm = 300000 }),
            ("s3-hwm-1000000", given with { Hwm = 1000000 }),
            ("s3-hwm-2000000", given with { Hwm = 2000000 }),
            ("s3-sndbuf-rcvbuf-65536", given with { SendBuffer = 65536, ReceiveBuffer = 65536 }),
            ("s3-sndbuf-rcvbuf-262144", given with { SendBuffer = 262144, ReceiveBuffer = 262144 }),
            ("s3-sndbuf-rcvbuf-1048576", given with { SendBuffer = 1048576, ReceiveBuffer = 1048576 }),
            ("s3-io-threads-1", given with { IoThreads = 1 }),
            ("s3-io-threads-2", given with { IoThreads = 2 }),
            ("s3-io-threads-4", given with { IoThreads = 4 }),
            ("s3-connect-concurrency-128", given with { ConnectConcurrency = 128 }),
            ("s3-connect-concurrency-256", given with { ConnectConcurrency = 256 }),
            ("s3-connect-concurrency-512", given with { ConnectConcurrency = 512 }),
        };
        Assert.That(runs.Select(r => r.Settings), Is.EqualTo(expected.Select(e => e.Settings with { Scenario = "s2", ScenarioId = e.Id })));
        Assert.That(runs.Select(r => r.SkipReason), Has.All.Null);
    }

    [Test]
    [CancelAfter(10_000)]
    public void S3KeepsTheOtherGivenValues()
    {
        IReadOnlyList<PlannedRun> runs = SweepPlan.For(
            Invocation("s3", "--ccu", "200", "--backlog", "100", "--hwm", "7", "--io-threads", "3", "--scenario-id", "night"),
            TcpOnly);

        Assert.Multiple(() =>
        {
            Assert.That(runs.Select(r => r.Settings.Ccu), Has.All.EqualTo(200));
            Assert.That(runs.Where(r => !r.Settings.ScenarioId!.Contains("backlog", StringComparison.Ordinal)).Select(r => r.Settings.Backlog), Has.All.EqualTo(100));
            Assert.That(runs.Where(r => !r.Settings.ScenarioId!.Contains("hwm", StringComparison.Ordinal)).Select(r => r.Settings.Hwm), Has.All.EqualTo(7));
            Assert.That(runs.Where(r => !r.Settings.ScenarioId!.Contains("io-threads", StringComparison.Ordinal)).Select(r => r.Settings.IoThreads), Has.All.EqualTo(3));
            Assert.That(runs[0].Settings.ScenarioId, Is.EqualTo("night-backlog-8192"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void S4RunsS0S1S2OverEveryTransportAndSkipsTheMissingOnes()
    {
        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Invocation("s4", "--ccu", "50"), TcpOnly);

        Assert.That(runs.Select(r => (r.Settings.Transport, r.Settings.Scenario, r.Settings.ScenarioId)), Is.EqualTo(new[]
        {
            ("tcp", "s0", "s4-tcp-s0"), ("tcp", "s1", "s4-tcp-s1"), ("tcp", "s2", "s4-tcp-s2"),
            ("tls", "s0", "s4-tls-s0"), ("tls", "s1", "s4-tls-s1"), ("tls", "s2", "s4-tls-s2"),
            ("ws", "s0", "s4-ws-s0"), ("ws", "s1", "s4-ws-s1"), ("ws", "s2", "s4-ws-s2"),
            ("wss", "s0", "s4-wss-s0"), ("wss", "s1", "s4-wss-s1"), ("wss", "s2", "s4-wss-s2"),
        }));
        Assert.Multiple(() =>
        {
            Assert.That(runs.Select(r => r.Settings.Ccu), Has.All.EqualTo(50));
            Assert.That(runs.Where(r => r.Settings.Transport == "tcp").Select(r => r.SkipReason), Has.All.Null);
            foreach (PlannedRun run in runs.Where(r => r.Settings.Transport != "tcp"))
            {
                Assert.That(run.SkipReason, Is.EqualTo($"transport {run.Settings.Transport} is not available in this native library"));
            }
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void S4RunsEveryTransportTheLibraryHas()
    {
        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Invocation("s4"), _ => true);

        Assert.That(runs, Has.Count.EqualTo(12));
        Assert.That(runs.Select(r => r.SkipReason), Has.All.Null);
    }

    [Test]
    [CancelAfter(10_000)]
    public void S4WithRoleClientSkipsTlsWithoutACa()
    {
        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Invocation("s4", "--role", "client"), _ => true);

        Assert.Multiple(() =>
        {
            Assert.That(runs.Where(r => r.Settings.Transport == "tls").Select(r => r.SkipReason),
                Has.Exactly(3).EqualTo("tls with --role client needs --tls-ca (the CA the server's certificate is verified against)"));
            Assert.That(runs.Where(r => r.Settings.Transport == "wss").Select(r => r.SkipReason),
                Has.Exactly(3).EqualTo("wss with --role client needs --tls-ca (the CA the server's certificate is verified against)"));
            Assert.That(runs.Where(r => r.Settings.Transport is "tcp" or "ws").Select(r => r.SkipReason), Has.Exactly(6).Null);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void S4WithRoleClientAndACaRunsTlsAgainstIt()
    {
        string ca = typeof(SweepPlanTests).Assembly.Location;

        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Invocation("s4", "--role", "client", "--tls-ca", ca), _ => true);

        Assert.Multiple(() =>
        {
            Assert.That(runs.Select(r => r.SkipReason), Has.All.Null);
            Assert.That(runs.Select(r => r.Settings.TlsCaFile), Has.All.EqualTo(ca));
        });
    }

    [TestCase("s0")]
    [TestCase("s1")]
    [TestCase("s2")]
    [CancelAfter(10_000)]
    public void SingleScenariosAreOneRunAsGiven(string scenario)
    {
        StressInvocation invocation = Invocation(scenario, "--size", "64");

        IReadOnlyList<PlannedRun> runs = SweepPlan.For(invocation, TcpOnly);

        Assert.That(runs, Is.EqualTo(new[] { new PlannedRun(invocation.Settings) }));
        Assert.That(runs[0].Settings.Scenario, Is.EqualTo(scenario));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AMissingTransportIsASkippedRun()
    {
        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Invocation("s1", "--transport", "wss"), TcpOnly);

        Assert.That(runs.Single().SkipReason, Is.EqualTo("transport wss is not available in this native library"));
    }

    // The project's native library: tcp only. (Pure, so the plan is tested without loading it.)
    private static bool TcpOnly(string transport) => transport == "tcp";

    private static StressInvocation Invocation(string scenario, params string[] more)
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--scenario", scenario, .. more]);
        Assert.That(outcome.Invocation, Is.Not.Null, string.Join("; ", outcome.Errors));
        return outcome.Invocation!;
    }
}
