// --role both --server-processes 2 with one server child killed by SIGKILL mid-run: the run fails
// (server_closed) and the parent says once which server died, on which port, with which exit code;
// each server's own lines are labelled with its index.
namespace NetZlink.Stress.Tests.Faults;

[RequiresStreamClient]
public sealed class ServerChildKillTests : IntegrationFixture
{
    [Test]
    [CancelAfter(90_000)]
    public async Task AServerChildThatDiesIsNamedWithItsPortAndExitCode(CancellationToken cancellationToken)
    {
        int port = FreePort.Consecutive(2);
        using StressProcess run = StressProcess.Start(
            "--ccu", "4", "--server-processes", "2", "--port", port.ToString(CultureInfo.InvariantCulture),
            "--shards", "1", "--inflight", "2", "--warmup", "0", "--measure", "3", "--drain-timeout", "1");
        await run.WaitForLineAsync(l => l.Contains("phase=measure", StringComparison.Ordinal), cancellationToken);
        IReadOnlyList<int> second = StressProcess.ServersOnPort(port + 1);
        Assert.That(second, Has.Count.EqualTo(1), run.Stderr);
        System.Diagnostics.Process.GetProcessById(second[0]).Kill();
        await run.WaitForExitAsync(cancellationToken);

        string warning = string.Create(CultureInfo.InvariantCulture, $"warning: server process 1 (port {port + 1}) exited with code 137");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Stderr);
            Assert.That(Regex.Matches(run.Stderr, Regex.Escape(warning)), Has.Count.EqualTo(1), run.Stderr);
            Assert.That(run.Stderr, Does.Not.Contain("server process 0 (port"), "the other server was stopped by its parent");
        });
    }
}
