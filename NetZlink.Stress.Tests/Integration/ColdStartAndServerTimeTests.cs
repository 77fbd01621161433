// The cold-start and server-time fields from the real CLI: each .NET stack's server child times its
// own reads and passes them back (SERVER_TIME) to --role both, and the client reports how long it took
// from its start to its first connection and first echo, and its first echoes' round trips.
namespace NetZlink.Stress.Tests.Integration;

public sealed class ColdStartAndServerTimeTests : IntegrationFixture
{
    [TestCase("netzlink", "s0")]
    [TestCase("dotnet", "s0")]
    [TestCase("netzlink", "s2")]
    [TestCase("dotnet", "s2")]
    [CancelAfter(120_000)]
    public async Task EveryRunReportsItsStartAndItsServersOwnTime(string stack, string scenario, CancellationToken cancellationToken)
    {
        ClientStacks.Require(stack);

        string[] load = scenario == "s0" ? [] : ["--ccu", "20", "--warmup", "0.5", "--measure", "1", "--latency-sample-rate", "4"];
        using StressProcess run = await StressProcess.RunAsync(
            cancellationToken, ["--scenario", scenario, "--stack", stack, .. load, "--drain-timeout", "5", "--port", FreePort.Next().ToString(System.Globalization.CultureInfo.InvariantCulture), "--quiet"]);

        string metric = OutputLines.Line(run.Stdout, "METRIC ");
        double connected = OutputLines.Decimal(metric, "startup_to_connected_ms");
        double firstEcho = OutputLines.Decimal(metric, "startup_to_first_echo_ms");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Stderr);
            Assert.That(OutputLines.Field(metric, "pass_fail"), Is.EqualTo("PASS"), run.Stderr);
            Assert.That(connected, Is.Positive);
            Assert.That(firstEcho, Is.GreaterThanOrEqualTo(connected), "the first echo comes after the first connection");
            Assert.That(OutputLines.Number(metric, "first_n"), Is.EqualTo(scenario == "s0" ? 1 : 100));
            Assert.That(OutputLines.Decimal(metric, "first_n_p50_us"), Is.Positive.And.LessThanOrEqualTo(OutputLines.Decimal(metric, "first_n_max_us")));
            // The server's clock stops when its send returns; on loopback that send delivers the echo,
            // so for s0's single packet the client may stamp it first: no order between the two. With
            // s2's samples the client's round trips hold a queue of packets in flight.
            Assert.That(OutputLines.Number(metric, "server_samples"), scenario == "s0" ? Is.EqualTo(1) : Is.Positive);
            Assert.That(OutputLines.Decimal(metric, "server_p50_us"),
                scenario == "s0" ? Is.Positive : Is.Positive.And.LessThanOrEqualTo(OutputLines.Decimal(metric, "p50_us")));
            Assert.That(OutputLines.Decimal(metric, "server_p99_us"), Is.GreaterThanOrEqualTo(OutputLines.Decimal(metric, "server_p50_us")));
            Assert.That(OutputLines.Decimal(metric, "server_max_us"), Is.GreaterThanOrEqualTo(OutputLines.Decimal(metric, "server_p99_us")));
            Assert.That(run.Stdout, Does.Not.Contain("SERVER_TIME"), "the child's line is read by the parent, not passed on");
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task TheLaunchersStampIsTheStart(CancellationToken cancellationToken)
    {
        // A launcher that says it started this process 20 s ago: both figures count from then.
        string twentySecondsAgo = ((DateTime.UtcNow - DateTime.UnixEpoch).TotalSeconds - 20).ToString("F6", System.Globalization.CultureInfo.InvariantCulture);
        using StressProcess run = await StressProcess.RunWithEnvironmentAsync(
            new Dictionary<string, string> { [ProcessStart.LaunchedAtVariable] = twentySecondsAgo },
            cancellationToken, ["--scenario", "s0", "--port", FreePort.Next().ToString(System.Globalization.CultureInfo.InvariantCulture), "--quiet"]);

        string metric = OutputLines.Line(run.Stdout, "METRIC ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Stderr);
            Assert.That(OutputLines.Decimal(metric, "startup_to_connected_ms"), Is.GreaterThanOrEqualTo(20_000));
            Assert.That(OutputLines.Decimal(metric, "startup_to_first_echo_ms"), Is.GreaterThanOrEqualTo(20_000));
        });
    }
}
