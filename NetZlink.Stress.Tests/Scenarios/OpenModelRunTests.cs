// Open-model s2 runs (--rate) from the real CLI (--role both), on both client stacks: the schedule's
// packets all go out and come back at about the rate; a server stall shows in the open model's p99
// (its packets count from their due time) where the closed loop's p99 hides it (coordinated
// omission); and packets the cap held back that never got out are named when the drain times out.

namespace NetZlink.Stress.Tests.Scenarios;

public sealed class OpenModelRunTests : IntegrationFixture
{
    private const int Ccu = 4;
    private const int Rate = 2000;

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task EveryScheduledPacketGoesOutAndComesBackAtAboutTheRate(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        using StressProcess run = await RunAsync(cancellationToken, "--client-stack", clientStack, "--rate", I(Rate),
            "--warmup", "0.5", "--measure", "2");

        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Field(result, "rate"), Is.EqualTo("2000.00"));
            // The measured schedule is rate × measure packets, and the drain waits for every one.
            Assert.That(Number(result, "sent"), Is.EqualTo(2 * Rate));
            Assert.That(Number(result, "recv"), Is.EqualTo(2 * Rate));
            Assert.That(Decimal(result, "throughput"), Is.InRange(Rate * 0.5, Rate * 1.5));
            Assert.That(Number(result, "lost"), Is.Zero);
            Assert.That(Decimal(result, "p50_us"), Is.Positive);
            // Pacing allocates nothing per packet: the measured phase's total stays a one-off (see EndToEndTests).
            Assert.That(Decimal(result, "alloc_bytes_per_packet") * 4 * Rate, Is.LessThan(256));
        });
    }

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task AServerStallShowsInTheOpenModelsP99(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        using StressProcess run = await RunStallAsync(cancellationToken, "--client-stack", clientStack, "--rate", I(Rate));

        // The stall holds back every packet due in its first second: those wait up to the whole
        // second, and they are a third of the measured ones.
        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Number(result, "sent"), Is.EqualTo(3 * Rate));
            Assert.That(Number(result, "late"), Is.GreaterThan(Rate / 2), "the cap held the stalled second's packets back");
            Assert.That(Decimal(result, "max_us"), Is.GreaterThan(900_000));
            Assert.That(Decimal(result, "p99_us"), Is.GreaterThan(500_000));
            Assert.That(Decimal(result, "p95_us"), Is.GreaterThan(100_000));
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(60_000)]
    public async Task TheSameStallHidesFromTheClosedLoopsP99(CancellationToken cancellationToken)
    {
        using StressProcess run = await RunStallAsync(cancellationToken);

        // Closed loop: only the window outstanding when the stall began waits; then the loop goes on
        // as fast as ever, so the stalled packets are too few to reach the 99th percentile.
        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Diagnostics);
            Assert.That(Field(result, "rate"), Is.EqualTo("0.00"));
            Assert.That(Number(result, "late"), Is.Zero);
            Assert.That(Decimal(result, "max_us"), Is.GreaterThan(900_000), "the stall did happen");
            Assert.That(Decimal(result, "p99_us"), Is.LessThan(500_000));
        });
    }

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task PacketsTheCapHeldBackAndNeverSentAreNamedWhenTheDrainTimesOut(string clientStack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        // A silent server: each connection sends its window of 5 and the other 995 of the measured
        // second's 1000 packets stay due and unsent.
        using StressProcess run = await RunAsync(cancellationToken, "--client-stack", clientStack, "--rate", "1000",
            "--fault", "silent", "--warmup", "0", "--measure", "1", "--drain-timeout", "1");

        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Diagnostics);
            Assert.That(Field(result, "fail_reason"), Is.EqualTo("drain_timeout"));
            Assert.That(Number(result, "sent"), Is.EqualTo(Ccu * 5));
            Assert.That(Number(result, "lost"), Is.EqualTo(Ccu * 5));
            Assert.That(Field(result, "reason"), Does.Contain("20 packets still outstanding and 980 measured packets still not sent"));
        });
    }

    /// <summary>s2 with a stall of 1 s at the start of a 3 s measured phase (no warm-up: the first packets are measured ones).</summary>
    private static Task<StressProcess> RunStallAsync(CancellationToken cancellationToken, params string[] more) =>
        RunAsync(cancellationToken, [.. more, "--fault", "stall", "--fault-after", "1", "--warmup", "0", "--measure", "3",
            "--latency-sample-rate", "1"]);

    /// <summary>s2 on <see cref="Ccu"/> connections of inflight 5; <paramref name="more"/> adds flags or overrides --drain-timeout (5 s).</summary>
    private static Task<StressProcess> RunAsync(CancellationToken cancellationToken, params string[] more)
    {
        var args = new List<string> { "--scenario", "s2", "--ccu", I(Ccu), "--inflight", "5", "--port", I(FreePort.Next()), "--quiet" };
        if (!more.Contains("--drain-timeout"))
        {
            args.AddRange(["--drain-timeout", "5"]);
        }

        return StressProcess.RunAsync(cancellationToken, [.. args, .. more]);
    }

    private static string I(int value) => value.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
