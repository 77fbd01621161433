// --role server as a real process with stdin at end of file (</dev/null as under nohup, systemd or a
// container without -i, or a pipe its parent closed): it keeps serving until SIGTERM, and only
// --exit-on-stdin-eof, which the tool's own server children get, makes the end of stdin stop it.

namespace NetZlink.Stress.Tests.Hosting;

public sealed class ServerStdinTests : IntegrationFixture
{
    private const string DevNull = "/dev/null";
    private const string ClosedPipe = "closed pipe";

    [TestCase(DevNull)]
    [TestCase(ClosedPipe)]
    [CancelAfter(60_000)]
    public async Task WithStdinAtItsEndTheServerKeepsRunningUntilSigterm(string stdin, CancellationToken cancellationToken)
    {
        using StressProcess server = Start(stdin, "--role", "server", "--port", "0");
        await server.WaitForReadyPortAsync(cancellationToken);
        if (stdin == ClosedPipe)
        {
            server.CloseStdin();
        }

        await Task.Delay(TimeSpan.FromSeconds(1), cancellationToken);
        bool runningAfterASecond = !server.HasExited;
        server.Signal("TERM");
        await server.WaitForExitAsync(cancellationToken);

        Assert.Multiple(() =>
        {
            Assert.That(runningAfterASecond, Is.True, $"the server stopped by itself: {Diagnostics(server)}");
            Assert.That(server.ExitCode, Is.Zero, Diagnostics(server));
            Assert.That(server.Stderr, Does.Contain("SIGTERM: stopping").And.Not.Contain("stdin closed"));
        });
    }

    [TestCase(DevNull)]
    [TestCase(ClosedPipe)]
    [CancelAfter(60_000)]
    public async Task WithExitOnStdinEofTheServerStopsAtTheEndOfStdin(string stdin, CancellationToken cancellationToken)
    {
        using StressProcess server = Start(stdin, "--role", "server", "--exit-on-stdin-eof", "--port", "0");
        if (stdin == ClosedPipe)
        {
            await server.WaitForReadyPortAsync(cancellationToken);
            server.CloseStdin();
        }

        // No signal: the end of stdin alone has to stop it (CancelAfter fails the test otherwise).
        await server.WaitForExitAsync(cancellationToken);

        Assert.Multiple(() =>
        {
            Assert.That(server.ExitCode, Is.Zero, Diagnostics(server));
            // READY, and on stopping its own times: no connection, so nothing timed.
            Assert.That(server.Stdout, Does.Match(@"^READY port=[1-9]\d*\r?\nSERVER_TIME version=1 samples=0 time_ns=\r?\n?$"));
            Assert.That(server.Stderr, Does.EndWith("echo server stopping: stdin closed"));
        });
    }

    private static StressProcess Start(string stdin, params string[] args) =>
        stdin == DevNull ? StressProcess.StartUnderShell("exec </dev/null", args) : StressProcess.Start(args);

    private static string Diagnostics(StressProcess process) =>
        $"exit {(process.HasExited ? process.ExitCode.ToString(System.Globalization.CultureInfo.InvariantCulture) : "none yet")}; stdout: {process.Stdout}; stderr: {process.Stderr}";
}
