// One run of the stress CLI in this process (StressApp, --quiet added), with what it wrote to
// standard output and error; and the runs the tls and ws tests share: an echo run of one
// transport between two stacks that must pass and lose nothing, and a run whose server
// certificate comes from a CA the client does not trust.
namespace NetZlink.Stress.Tests.Support;

internal static class InProcessRun
{
    /// <summary>A free loopback port, as a --port value.</summary>
    public static string Port() => FreePort.Next().ToString(CultureInfo.InvariantCulture);

    /// <summary>Runs the CLI with <paramref name="args"/> and --quiet; <paramref name="serverStarting"/> sees each server's settings.</summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(
        Action<ScenarioSettings>? serverStarting, CancellationToken cancellationToken, params string[] args)
    {
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int exitCode = await new StressApp(stdout, stderr, serverStarting: serverStarting).RunAsync([.. args, "--quiet"], cancellationToken);
        return (exitCode, stdout.ToString(), stderr.ToString());
    }

    /// <summary>
    /// Runs <paramref name="scenario"/> (s0: one connection; otherwise 10 connections for a one-second
    /// measure) over <paramref name="transport"/> from <paramref name="clientStack"/> to
    /// <paramref name="serverStack"/> and asserts it passed: the transport and the stack pair named,
    /// every connection up, nothing lost, every packet sent echoed. Returns standard output.
    /// </summary>
    public static async Task<string> AssertEchoRunPassesAsync(
        string transport, string clientStack, string serverStack, string scenario, CancellationToken cancellationToken)
    {
        string[] load = scenario == "s0" ? [] : ["--ccu", "10", "--warmup", "0.2", "--measure", "1"];
        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            ["--scenario", scenario, "--transport", transport, "--client-stack", clientStack, "--server-stack", serverStack, .. load, "--drain-timeout", "5", "--port", Port()]);

        string result = Line(stdout, "RESULT ");
        string stack = clientStack == serverStack ? clientStack : $"{clientStack}+{serverStack}";
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass), stderr);
            Assert.That(Field(result, "transport"), Is.EqualTo(transport));
            Assert.That(Field(result, "stack"), Is.EqualTo(stack));
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), result);
            Assert.That(Number(result, "lost"), Is.Zero);
            Assert.That(Number(result, "connect_success"), Is.EqualTo(scenario == "s0" ? 1 : 10));
            Assert.That(Number(result, "recv"), Is.Positive.And.EqualTo(Number(result, "sent")));
        });
        return stdout;
    }

    /// <summary>
    /// Runs <paramref name="args"/> with a server certificate and key from one fresh CA and, as the
    /// CA the client trusts, another fresh one; the certificates go when the run ends.
    /// </summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunWithCertificateFromAnotherCaAsync(
        CancellationToken cancellationToken, params string[] args)
    {
        using RunCertificates server = RunCertificates.Create();
        using RunCertificates other = RunCertificates.Create();
        return await RunAsync(
            null,
            cancellationToken,
            [.. args, "--tls-cert", server.CertificateFile, "--tls-key", server.KeyFile, "--tls-ca", other.CaFile]);
    }
}
