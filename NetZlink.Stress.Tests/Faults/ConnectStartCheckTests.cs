// What the real CLI (--role client, netzlink stack) says when the run cannot connect at all: a
// native library whose STREAM sockets are server-only (the test shim libzlink_streamserver.so,
// loaded through NETZLINK_NATIVE_LIBRARY, refuses zlink_connect on STREAM with EOPNOTSUPP as zlink
// 1.3 does), and a host name that does not resolve. Each is one "error:" line on stderr naming the
// cause, a non-zero exit and no RESULT line, instead of a run whose every connection failed alike.

namespace NetZlink.Stress.Tests.Faults;

public sealed class ConnectStartCheckTests : IntegrationFixture
{
    private static readonly string ShimPath = Path.Combine("native", "build", "tests", "libzlink_streamserver.so");

    [Test, CancelAfter(60_000)]
    public async Task ALibraryWhoseStreamCannotConnectFailsTheRunAtStartNamingTheLibrary(CancellationToken cancellationToken)
    {
        string shim = FindShim();
        using StressProcess run = await StressProcess.RunWithEnvironmentAsync(
            new Dictionary<string, string> { ["NETZLINK_NATIVE_LIBRARY"] = shim }, cancellationToken,
            Client("127.0.0.1", FreePort.Next()));

        string error = OneErrorLine(run);
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(2), run.Diagnostics);
            Assert.That(error, Does.StartWith($"error: The native library {shim} (from NETZLINK_NATIVE_LIBRARY) cannot connect STREAM sockets: "));
            Assert.That(error, Does.Contain("EOPNOTSUPP"));
            Assert.That(run.Stdout, Does.Not.Contain("RESULT "), "no run: the engine did not start");
        });
    }

    [Test, CancelAfter(60_000)]
    public async Task AHostThatDoesNotResolveIsOneErrorLineNamingIt(CancellationToken cancellationToken)
    {
        int port = FreePort.Next();
        using StressProcess run = await StressProcess.RunAsync(cancellationToken, Client("nonexistent.invalid", port));

        string error = OneErrorLine(run);
        Assert.Multiple(() =>
        {
            // Exit 1, as the dotnet stack gives for the same --host: a host that names nothing.
            Assert.That(run.ExitCode, Is.EqualTo(1), run.Diagnostics);
            Assert.That(error, Does.StartWith($"error: could not resolve host 'nonexistent.invalid' in endpoint tcp://nonexistent.invalid:{port}: "));
            Assert.That(run.Stdout, Does.Not.Contain("RESULT "), "no run: the engine was not made");
        });
    }

    private static string[] Client(string host, int port) =>
    [
        "--role", "client", "--scenario", "s1", "--stack", "netzlink", "--ccu", "8", "--host", host,
        "--port", port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--quiet",
    ];

    private static string OneErrorLine(StressProcess run)
    {
        string[] errors = run.Stderr.Split('\n').Where(l => l.StartsWith("error: ", StringComparison.Ordinal)).ToArray();
        Assert.That(errors, Has.Length.EqualTo(1), run.Diagnostics);
        return errors[0];
    }

    /// <summary>The test shim the native build makes next to its C tests, in the repository's native/build.</summary>
    private static string FindShim()
    {
        string candidate = RepositoryRoot.Combine(ShimPath);
        if (!File.Exists(candidate))
        {
            Assert.Fail($"{candidate} not found: build native/ (cmake --build native/build)");
        }

        return candidate;
    }
}
