// A server that reads slowly is not a fault of the client: with one shard, one send per call and
// tiny socket buffers, every connection meets the socket's high-water mark again and again. Before
// the STREAM send protocol was made unambiguous this run wrote one connection's routing id into
// another's stream and ended FAIL fail_reason=client_stopped lost=120; it must PASS with nothing lost.

namespace NetZlink.Stress.Tests.Integration;

[RequiresStreamClient]
public sealed class SlowServerRunTests : IntegrationFixture
{
    [TestCase("2")]
    [TestCase(null)]
    [CancelAfter(120_000)]
    public async Task ASlowServerAtTheHighWaterMarkPassesWithNothingLost(string? hwm, CancellationToken cancellationToken)
    {
        var args = new List<string>
        {
            "--scenario", "s2", "--ccu", "4", "--inflight", "30", "--warmup", "0", "--measure", "3", "--drain-timeout", "3",
            "--quiet", "--fault", "slow", "--sndbuf", "4096", "--rcvbuf", "4096", "--shards", "1", "--send-batch", "1",
            "--port", FreePort.Next().ToString(System.Globalization.CultureInfo.InvariantCulture),
        };
        if (hwm is not null)
        {
            args.AddRange(["--hwm", hwm]);
        }

        using StressProcess run = await StressProcess.RunAsync(cancellationToken, [.. args]);
        string result = OutputLines.Line(run.Stdout, "RESULT ");
        TestContext.Out.WriteLine(result);
        Assert.Multiple(() =>
        {
            Assert.That(OutputLines.Field(result, "pass_fail"), Is.EqualTo("PASS"), $"stdout: {run.Stdout}\nstderr: {run.Stderr}");
            Assert.That(OutputLines.Field(result, "lost"), Is.EqualTo("0"));
            Assert.That(OutputLines.Field(result, "fail_reason"), Is.EqualTo("none"));
            Assert.That(long.Parse(OutputLines.Field(result, "recv"), System.Globalization.CultureInfo.InvariantCulture), Is.Positive);
            Assert.That(run.ExitCode, Is.Zero);
        });
    }
}
