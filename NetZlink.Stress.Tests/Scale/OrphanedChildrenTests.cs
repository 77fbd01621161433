// A --processes parent killed outright (kill -9: no handler runs, nothing is closed by hand) must not
// leave its children running: the kernel closes the stdin pipes it held, and each client child takes
// that end of stdin as SIGTERM, the server child stops at it as before.

namespace NetZlink.Stress.Tests.Scale;

[RequiresStreamClient]
public sealed class OrphanedChildrenTests : IntegrationFixture
{
    [Test]
    [CancelAfter(90_000)]
    public async Task ClientChildrenStopWhenTheirParentIsKilled(CancellationToken cancellationToken)
    {
        int port = FreePort.Consecutive(1);
        using StressProcess parent = StressProcess.Start(
            "--ccu", "4", "--processes", "2", "--port", port.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--shards", "1", "--inflight", "1", "--warmup", "1", "--measure", "60");

        // Both children connected and told their start: they are past the start line, in their run.
        await parent.WaitForLineAsync(l => l.Contains("client processes connected", StringComparison.Ordinal), cancellationToken);
        await Task.Delay(TimeSpan.FromSeconds(1.5), cancellationToken);
        Assert.That(StressProcess.OnPort("client", port), Has.Count.EqualTo(2), "two client children running before the kill");

        parent.Signal("KILL");
        await parent.WaitForExitAsync(cancellationToken);

        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(8);
        while (StressProcess.OnPort("client", port).Count > 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100, cancellationToken);
        }

        IReadOnlyList<int> left = StressProcess.OnPort("client", port);
        foreach (int pid in left)
        {
            // Do not leave them behind for the next test either.
            System.Diagnostics.Process.GetProcessById(pid).Kill();
        }

        Assert.Multiple(() =>
        {
            Assert.That(left, Is.Empty, "client children outlived their killed parent");
            Assert.That(StressProcess.ServersOnPort(port), Is.Empty, "the server child outlived its killed parent");
        });
    }
}
