// The echo server (a real `--role server` process) is killed with SIGKILL in the middle of the
// measured phase while the client (in this process) keeps packets in flight on every connection:
// the client must end within its drain timeout, FAIL with server_closed, and count every packet it
// sent and never got back as lost, exactly.
namespace NetZlink.Stress.Tests.Faults;

public sealed class ServerKillTests : IntegrationFixture
{
    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task KillingTheServerMidMeasureFailsTheRunWithTheExactLoss(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        using StressProcess server = StressProcess.Start("--role", "server", "--port", "0", "--quiet");
        int port = await server.WaitForReadyPortAsync(cancellationToken);

        // No warm-up: every packet is a measured one, so lost can be compared with sent - recv.
        var settings = new ScenarioSettings
        {
            Scenario = "s2",
            Port = port,
            Ccu = 4,
            Inflight = 5,
            WarmupSeconds = 0,
            MeasureSeconds = 3,
            DrainTimeoutSeconds = 2,
            ClientStack = clientStack,
        };
        var elapsed = Stopwatch.StartNew();
        Task<ScenarioResult> running = ScenarioRunner.RunClientAsync(settings, progress: null, cancellationToken);
        await Task.Delay(TimeSpan.FromSeconds(1.5), cancellationToken);
        Assert.That(running.IsCompleted, Is.False, "the run ended before the server was killed");
        server.Signal("KILL");
        ScenarioResult result = await running;
        elapsed.Stop();

        Assert.Multiple(() =>
        {
            Assert.That(elapsed.Elapsed, Is.LessThan(TimeSpan.FromSeconds(settings.MeasureSeconds + settings.DrainTimeoutSeconds + 5)),
                "the client ends within its drain timeout (plus start-up)");
            Assert.That(result.PassFail, Is.EqualTo("FAIL"));
            Assert.That(result.FailReason, Is.EqualTo(FailReasons.ServerClosed));
            Assert.That(result.Reason, Does.Contain("the server closed 4 connections"));
            Assert.That(result.Disconnects, Is.EqualTo(settings.Ccu));
            Assert.That(result.ProtocolErrors, Is.Zero);
            Assert.That(result.DrainTimeout, Is.Zero, "a dead connection has nothing left to drain");
            Assert.That(result.Recv, Is.Positive, "echoes came back before the kill");
            Assert.That(result.Lost, Is.Positive, "packets were in flight when the server died");
            Assert.That(result.Lost, Is.EqualTo(result.Sent - result.Recv));
        });
    }
}
