// A server that cannot be reached, from the real CLI (--role client) on both client stacks: the
// connections are counted as connect_fail or connect_timeout with their errno, the run ends within
// the bounds its connect flags set, and waiting between retries does not burn the CPU.
namespace NetZlink.Stress.Tests.Faults;

public sealed class ConnectFailureTests : IntegrationFixture
{
    private const int Ccu = 8;

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task RefusedConnectionsAreConnectFailWithErrno111AndNoBusyRetrying(string stack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(stack);

        const int retries = 3;
        const int retryDelayMs = 500;
        var elapsed = Stopwatch.StartNew();
        using StressProcess run = await RunClientAsync(stack, "127.0.0.1", FreePort.Next(), cancellationToken,
            "--connect-timeout", "2", "--connect-retries", Invariant(retries), "--connect-retry-delay-ms", Invariant(retryDelayMs));
        elapsed.Stop();

        // Every attempt of every connection was refused, and each is one errno count.
        string result = AssertNoneConnected(run, timedOut: false, errors: $"111:{Ccu * (retries + 1)}");
        // Between attempts the client only waits: a retry loop that spun would burn about this much per shard.
        double waitedSeconds = retries * retryDelayMs / 1000.0;
        Assert.Multiple(() =>
        {
            Assert.That(elapsed.Elapsed, Is.LessThan(TimeSpan.FromSeconds(waitedSeconds + 20)), "no hang");
            Assert.That(Decimal(result, "cpu_s"), Is.LessThan(waitedSeconds / 2), "CPU while waiting to retry: a busy loop?");
        });
    }

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task AnUnroutableAddressIsConnectFailWithItsErrnoAtOnce(string stack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(stack);

        // Linux refuses a TCP connect to the broadcast address with ENETUNREACH (101) without sending
        // anything. (A "black hole" address would need a network that drops packets; this sandbox
        // answers every outside address through its proxy, so none exists here.)
        var elapsed = Stopwatch.StartNew();
        using StressProcess run = await RunClientAsync(stack, "255.255.255.255", 27110, cancellationToken,
            "--connect-timeout", "5", "--connect-retries", "1", "--connect-retry-delay-ms", "100");
        elapsed.Stop();

        AssertNoneConnected(run, timedOut: false, errors: $"101:{Ccu * 2}");
        Assert.That(elapsed.Elapsed, Is.LessThan(TimeSpan.FromSeconds(5 + 15)), "failed at once, not after the connect timeout");
    }

    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task AServerThatNeverCompletesTheHandshakeIsConnectTimeoutWithErrno110(string stack, CancellationToken cancellationToken)
    {
        ClientStacks.Require(stack);

        // A listener whose accept queue is full: the kernel drops further SYNs, so every attempt hangs
        // until the client's own --connect-timeout, as with an unreachable host.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(0);
        int port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        var fillers = new List<Socket>();
        try
        {
            for (int i = 0; i < 2; i++)
            {
                var filler = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { Blocking = false };
                fillers.Add(filler);
                try
                {
                    filler.Connect(IPAddress.Loopback, port);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.WouldBlock)
                {
                }
            }

            await Task.Delay(200, cancellationToken);
            var elapsed = Stopwatch.StartNew();
            using StressProcess run = await RunClientAsync(stack, "127.0.0.1", port, cancellationToken,
                "--connect-timeout", "0.5", "--connect-retries", "1", "--connect-retry-delay-ms", "100");
            elapsed.Stop();

            AssertNoneConnected(run, timedOut: true, errors: $"110:{Ccu * 2}");
            Assert.That(elapsed.Elapsed, Is.LessThan(TimeSpan.FromSeconds((2 * 0.5) + 0.1 + 15)), "no hang past the timeouts");
        }
        finally
        {
            fillers.ForEach(f => f.Dispose());
        }
    }

    /// <summary>An s1 run of <see cref="Ccu"/> connections to <paramref name="host"/>:<paramref name="port"/>, one attempt in flight per shard at a time or more.</summary>
    private static Task<StressProcess> RunClientAsync(string stack, string host, int port, CancellationToken cancellationToken, params string[] more) =>
        StressProcess.RunAsync(cancellationToken,
        [
            "--role", "client", "--scenario", "s1", "--stack", stack, "--ccu", Invariant(Ccu), "--host", host,
            "--port", Invariant(port), "--quiet", .. more,
        ]);

    /// <summary>
    /// Checks that the run FAILed with no connection: all <see cref="Ccu"/> counted as timed out or
    /// as failed, the matching fail_reason, and exactly <paramref name="errors"/> as errors_by_errno.
    /// Returns the RESULT line.
    /// </summary>
    private static string AssertNoneConnected(StressProcess run, bool timedOut, string errors)
    {
        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Diagnostics);
            Assert.That(Number(result, "connect_success"), Is.Zero);
            Assert.That(Number(result, "connect_fail"), Is.EqualTo(timedOut ? 0 : Ccu));
            Assert.That(Number(result, "connect_timeout"), Is.EqualTo(timedOut ? Ccu : 0));
            Assert.That(Field(result, "fail_reason"), Is.EqualTo(timedOut ? "connect_timeout" : "connect_fail"));
            Assert.That(Field(Line(run.Stdout, "METRIC "), "errors_by_errno"), Is.EqualTo(errors));
        });
        return result;
    }

    private static string Invariant(int value) => value.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
