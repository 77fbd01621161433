// The client's own context is disposed from another thread in the middle of the measured phase
// (the stress tool's equivalent of an application tearing NetZlink down under load): the run must
// end within ClientStopBound, not at the end of its 30 s measure, with a FAIL result whose
// fail_reason is client_stopped, whose reason names the terminated context, and whose lost counts
// exactly the packets that were outstanding; the RESULT and METRIC lines are printed as usual.
namespace NetZlink.Stress.Tests.Faults;

[RequiresStreamClient]
public sealed class ClientContextTerminationTests : IntegrationFixture
{
    /// <summary>The stated bound (docs/binding.md, "Lifetime under load"): from the context's Dispose to the result.</summary>
    private static readonly TimeSpan ClientStopBound = TimeSpan.FromSeconds(5);

    [Test]
    [CancelAfter(90_000)]
    public async Task DisposingTheClientsContextMidMeasureFailsTheRunWithinTheBoundAndPrintsTheResult(CancellationToken cancellationToken)
    {
        using var server = new EchoServer(new ScenarioSettings { Port = 0, Backlog = 1024, Hwm = 10_000 });
        server.Start();
        using var context = new ZlinkContext();
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();

        ScenarioResult? result = null;
        TimeSpan teardownToResult = TimeSpan.MaxValue;
        bool disposeReturned = false;
        async Task<ScenarioResult> RunWithTeardown(ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, CancellationToken token)
        {
            var measuring = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var watch = new Progress<ProgressSnapshot>(p =>
            {
                if (p.Phase == "measure" && p.ReceivedPerSecond > 0)
                {
                    measuring.TrySetResult();
                }
            });
            Task<ScenarioResult> running = ScenarioRunner.RunClientAsync(settings, watch, notices: null, context, token);
            await measuring.Task.WaitAsync(TimeSpan.FromSeconds(30), token);

            var clock = Stopwatch.StartNew();
            var disposer = new Thread(context.Dispose);
            disposer.Start();
            result = await running.WaitAsync(ClientStopBound * 2, token);
            teardownToResult = clock.Elapsed;
            disposeReturned = disposer.Join(ClientStopBound);
            return result;
        }

        int exitCode = await new StressApp(stdout, stderr, RunWithTeardown).RunAsync(
            ["--role", "client", "--host", "127.0.0.1", "--port", server.Port.ToString(System.Globalization.CultureInfo.InvariantCulture),
             "--scenario", "s2", "--ccu", "20", "--inflight", "5", "--warmup", "0", "--measure", "30", "--drain-timeout", "10",
             "--shards", "2", "--quiet"],
            cancellationToken);

        string output = stdout.ToString();
        TestContext.Out.WriteLine($"context disposed -> result in {teardownToResult.TotalMilliseconds:0} ms");
        TestContext.Out.WriteLine(output);
        string resultLine = Line(output, "RESULT ");
        string metricLine = Line(output, "METRIC ");
        Assert.Multiple(() =>
        {
            Assert.That(result, Is.Not.Null, "the runner returned a result");
            Assert.That(stderr.ToString(), Does.Not.Contain("error:"), "no exception reached the program");
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure));
            Assert.That(disposeReturned, Is.True, $"Context.Dispose did not return within {ClientStopBound}");
            Assert.That(teardownToResult, Is.LessThan(ClientStopBound), "the run ended within the bound, not after its measure");
            Assert.That(result!.PassFail, Is.EqualTo("FAIL"));
            Assert.That(result.FailReason, Is.EqualTo(FailReasons.ClientStopped));
            Assert.That(result.Reason, Does.Contain("the client stopped mid-run").And.Contain("context was disposed or shut down"));
            Assert.That(result.ConnectSuccess, Is.EqualTo(20));
            Assert.That(result.Disconnects, Is.Zero, "the server closed nothing");
            Assert.That(result.Recv, Is.Positive, "echoes came back before the teardown");
            Assert.That(result.Throughput, Is.Positive, "the rate over the part of the measure that ran");
            Assert.That(result.Lost, Is.Positive, "packets were in flight when the context went");
            Assert.That(result.Lost, Is.EqualTo(result.Sent - result.Recv), "no warm-up: every packet sent and not echoed is lost");
            Assert.That(Field(resultLine, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Field(resultLine, "fail_reason"), Is.EqualTo("client_stopped"));
            Assert.That(Number(resultLine, "lost"), Is.EqualTo(result.Lost));
            Assert.That(Field(metricLine, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Field(metricLine, "fail_reason"), Is.EqualTo("client_stopped"));
        });
    }
}
