// Each --fault of the built-in server, run from the real CLI (--role both: the fault server in its
// child process, the client in the parent) with a few connections and a one-second measure, on
// both client stacks: what the client counts and how it judges the run.

namespace NetZlink.Stress.Tests.Faults;

public sealed class FaultServerRunTests : IntegrationFixture
{
    private const int Ccu = 4;
    private const int Inflight = 5;

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task ASilentServerTimesTheDrainOutWithEveryPacketStillInFlight(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        using StressProcess run = await RunFaultAsync("silent", clientStack, cancellationToken, "--fault-every", "1");

        string result = Line(run.Stdout, "RESULT ");
        const int expected = Ccu * Inflight;
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Field(result, "fail_reason"), Is.EqualTo("drain_timeout"));
            Assert.That(Field(result, "drain_timeout"), Is.EqualTo("1"));
            Assert.That(Number(result, "connect_success"), Is.EqualTo(Ccu));
            Assert.That(Number(result, "sent"), Is.EqualTo(expected), "each connection sends its window and no more");
            Assert.That(Number(result, "recv"), Is.Zero);
            Assert.That(Number(result, "lost"), Is.EqualTo(expected));
            Assert.That(Field(result, "reason"), Does.Contain($"{expected} packets still outstanding after the 1 s drain timeout"));
        });
    }

    [TestCase("garbage", "netzlink")]
    [TestCase("garbage", "dotnet")]
    [TestCase("wrong-length", "netzlink")]
    [TestCase("wrong-length", "dotnet")]
    [CancelAfter(60_000)]
    public async Task ABadLengthHeaderClosesThatConnectionAsAProtocolErrorAndTheOthersGoOn(string fault, string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        // Only the first of the four connections gets the fault.
        using StressProcess run = await RunFaultAsync(fault, clientStack, cancellationToken, "--fault-every", Invariant(Ccu));

        string result = AssertOneConnectionLostItsWindow(run, "protocol_error");
        Assert.Multiple(() =>
        {
            Assert.That(Number(result, "protocol_errors"), Is.EqualTo(1));
            Assert.That(Number(result, "disconnects"), Is.Zero);
        });
    }

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task AServerClosingMidPacketLosesThatConnectionsPacketsThePartialOneIncluded(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        using StressProcess run = await RunFaultAsync("close-mid-packet", clientStack, cancellationToken, "--fault-every", Invariant(Ccu));

        // Half of the first packet came back before the close: it is lost with the rest of the window.
        string result = AssertOneConnectionLostItsWindow(run, "server_closed");
        Assert.Multiple(() =>
        {
            Assert.That(Number(result, "disconnects"), Is.EqualTo(1));
            Assert.That(Number(result, "protocol_errors"), Is.Zero);
        });
    }

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task ASlowServerWithSmallBuffersLosesNothingAndTheClientStaysSmall(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        using StressProcess run = await RunFaultAsync("slow", clientStack, cancellationToken,
            "--fault-every", "1", "--hwm", "16", "--sndbuf", "8192", "--rcvbuf", "8192", "--drain-timeout", "5");

        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Field(result, "fail_reason"), Is.EqualTo("none"));
            Assert.That(Number(result, "lost"), Is.Zero);
            Assert.That(Number(result, "recv"), Is.EqualTo(Number(result, "sent")));
            Assert.That(Number(result, "recv"), Is.Positive);
            // The client holds at most its window per connection whatever the server's pace: a .NET
            // process with the engine runs in about 45 MB here; a client buffering without bound would not.
            Assert.That(Decimal(result, "peak_rss_mb"), Is.LessThan(200));
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(60_000)]
    public async Task ACrashingServerFailsTheRunWithEveryOutstandingPacketCountedLost(CancellationToken cancellationToken)
    {
        using StressProcess run = await RunFaultAsync("crash", "netzlink", cancellationToken,
            "--fault-every", "1", "--fault-after", "1", "--measure", "3", "--drain-timeout", "2");

        string result = Line(run.Stdout, "RESULT ");
        long lost = Number(result, "lost");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Diagnostics);
            Assert.That(run.Stderr, Does.Contain("killing itself with SIGKILL"));
            Assert.That(Field(result, "fail_reason"), Is.EqualTo("server_closed"));
            Assert.That(Number(result, "disconnects"), Is.EqualTo(Ccu));
            Assert.That(lost, Is.Positive);
            Assert.That(lost, Is.EqualTo(Number(result, "sent") - Number(result, "recv")));
        });
    }

    /// <summary>
    /// An s2 run of <see cref="Ccu"/> connections with no warm-up, so that every packet is a measured
    /// one; <paramref name="more"/> adds flags or overrides --measure and --drain-timeout (1 s each).
    /// </summary>
    private static Task<StressProcess> RunFaultAsync(string fault, string clientStack, CancellationToken cancellationToken, params string[] more)
    {
        var args = new List<string>
        {
            "--scenario", "s2", "--ccu", Invariant(Ccu), "--inflight", Invariant(Inflight), "--warmup", "0",
            "--port", Invariant(FreePort.Next()), "--client-stack", clientStack, "--quiet", "--fault", fault,
        };
        foreach (string flag in new[] { "--measure", "--drain-timeout" }.Where(f => !more.Contains(f)))
        {
            args.AddRange([flag, "1"]);
        }

        return StressProcess.RunAsync(cancellationToken, [.. args, .. more]);
    }

    /// <summary>
    /// The faulty first connection's first window never came back and nothing else was lost: the
    /// other connections connected, kept echoing and drained. Returns the RESULT line.
    /// </summary>
    private static string AssertOneConnectionLostItsWindow(StressProcess run, string failReason)
    {
        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Field(result, "fail_reason"), Is.EqualTo(failReason));
            Assert.That(Number(result, "connect_success"), Is.EqualTo(Ccu));
            Assert.That(Field(result, "drain_timeout"), Is.EqualTo("0"), "the other connections drained");
            Assert.That(Number(result, "recv"), Is.GreaterThan(Inflight * 10), "the other connections kept echoing");
            Assert.That(Number(result, "lost"), Is.EqualTo(Inflight));
            Assert.That(Number(result, "sent") - Number(result, "recv"), Is.EqualTo(Inflight));
        });
        return result;
    }

    private static string Invariant(int value) => value.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
