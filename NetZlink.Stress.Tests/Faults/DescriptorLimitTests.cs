// ccu 10000 under `ulimit -n 1024`: the client must stop before its first connection, saying which
// limit it hit and how many descriptors the run needs, on both client stacks.

namespace NetZlink.Stress.Tests.Faults;

public sealed class DescriptorLimitTests : IntegrationFixture
{
    [EachClientStack]
    [CancelAfter(60_000)]
    public async Task TenThousandConnectionsUnderALimitOf1024FailBeforeConnectingAndSaySo(string stack, CancellationToken cancellationToken)
    {
        // Something listens, so that a connection attempt would show as a pending connection.
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start(16);
        string port = ((IPEndPoint)listener.LocalEndpoint).Port.ToString(System.Globalization.CultureInfo.InvariantCulture);

        using StressProcess run = await StressProcess.RunUnderShellAsync("ulimit -n 1024", cancellationToken,
            "--role", "client", "--scenario", "s1", "--stack", stack, "--ccu", "10000", "--port", port, "--quiet");

        string diagnostics = $"stdout: {run.Stdout}\nstderr: {run.Stderr}";
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(ExitCodes.Failure), diagnostics);
            Assert.That(run.Stderr, Does.Match(@"error: 10000 connections need \d+ open files"), diagnostics);
            Assert.That(run.Stderr, Does.Contain("at most 1024 (ulimit -n: soft 1024, hard 1024)"), diagnostics);
            Assert.That(run.Stdout, Does.Not.Contain("RESULT "), "no run took place");
            Assert.That(listener.Pending(), Is.False, "a connection was attempted");
        });
    }
}
