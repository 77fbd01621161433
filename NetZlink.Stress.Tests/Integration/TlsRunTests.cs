// s4 and --transport tls for real: the netzlink client and echo server (in its child) over tls://
// with the certificates the tool makes per run, checked by the client against their CA; the
// files gone afterwards; a certificate from another CA refused; an unusable certificate a clear error.
namespace NetZlink.Stress.Tests.Integration;

public sealed class TlsRunTests : IntegrationFixture
{
    [SetUp]
    public void RequireTls()
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(180_000)]
    public async Task S4PassesOverTcpAndTlsAndRemovesItsCertificates(CancellationToken cancellationToken)
    {
        var servers = new List<ScenarioSettings>();
        var filesAtStart = new List<bool>();
        (int exitCode, string stdout, string stderr) = await RunAsync(
            settings =>
            {
                servers.Add(settings);
                filesAtStart.Add(settings.TlsCertificateFile is { } cert && File.Exists(cert)
                    && File.Exists(settings.TlsKeyFile) && File.Exists(settings.TlsCaFile));
            },
            cancellationToken,
            "--scenario", "s4", "--ccu", "10", "--warmup", "0.2", "--measure", "1", "--drain-timeout", "5", "--port", Port());

        string[] results = stdout.Split('\n').Where(l => l.StartsWith("RESULT ", StringComparison.Ordinal)).ToArray();
        string[] metrics = stdout.Split('\n').Where(l => l.StartsWith("METRIC ", StringComparison.Ordinal)).ToArray();
        ScenarioSettings[] tlsServers = servers.Where(s => s.Transport == "tls").ToArray();
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass), stderr);
            Assert.That(results, Has.Length.EqualTo(12));
            Assert.That(metrics.Select(m => Field(m, "scenario_id")).Take(6),
                Is.EqualTo(new[] { "s4-tcp-s0", "s4-tcp-s1", "s4-tcp-s2", "s4-tls-s0", "s4-tls-s1", "s4-tls-s2" }));
            foreach (string result in results.Take(6))
            {
                Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), result);
                Assert.That(Number(result, "lost"), Is.Zero, result);
                Assert.That(Number(result, "connect_fail"), Is.Zero, result);
            }

            Assert.That(results.Skip(3).Take(3).Select(r => Field(r, "transport")), Has.All.EqualTo("tls"));
            Assert.That(Number(results[5], "recv"), Is.Positive, "the tls s2 run echoed nothing");
            Assert.That(Number(results[5], "recv"), Is.EqualTo(Number(results[5], "sent")));
            // ws and wss: PASS where the native library has them, SKIP where it does not.
            Assert.That(results.Skip(6).Select(r => Field(r, "pass_fail")),
                Is.EqualTo(results.Skip(6).Select(r => TransportCatalog.IsAvailable(Field(r, "transport")) ? "PASS" : "SKIP")));

            // One CA and server certificate per tls run, there while it ran, removed after it.
            Assert.That(servers.Where(s => s.Transport is "tcp" or "ws").Select(s => s.TlsCertificateFile), Has.All.Null);
            Assert.That(tlsServers, Has.Length.EqualTo(3));
            Assert.That(filesAtStart, Is.EqualTo(servers.Select(s => s.Transport is "tls" or "wss")), "certificates for tls and wss runs only");
            Assert.That(tlsServers.Select(s => Path.GetDirectoryName(s.TlsCaFile)).Distinct().Count(), Is.EqualTo(3));
            Assert.That(tlsServers.Select(s => Path.GetDirectoryName(s.TlsCaFile)), Has.None.Matches<string>(Directory.Exists));
        });
    }

    [RequiresStreamClient]
    [TestCase("s0")]
    [TestCase("s2")]
    [CancelAfter(120_000)]
    public async Task TheNetzlinkClientRunsAgainstTheDotnetTlsServer(string scenario, CancellationToken cancellationToken)
    {
        string[] load = scenario == "s0" ? [] : ["--ccu", "10", "--warmup", "0.2", "--measure", "1"];
        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            ["--scenario", scenario, "--transport", "tls", "--client-stack", "netzlink", "--server-stack", "dotnet", .. load, "--drain-timeout", "5", "--port", Port()]);

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass), stderr);
            Assert.That(Field(result, "transport"), Is.EqualTo("tls"));
            Assert.That(Field(result, "stack"), Is.EqualTo("netzlink+dotnet"));
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), result);
            Assert.That(Number(result, "lost"), Is.Zero);
            Assert.That(Number(result, "recv"), Is.Positive.And.EqualTo(Number(result, "sent")));
            Assert.That(Number(Line(stdout, "METRIC "), "server_samples"), Is.Positive, "the dotnet tls server timed no read");
        });
    }

    [TestCase("netzlink", "s0")]
    [TestCase("netzlink", "s2")]
    [TestCase("dotnet", "s0")]
    [TestCase("dotnet", "s2")]
    [CancelAfter(120_000)]
    public async Task TheDotnetClientRunsOverTls(string serverStack, string scenario, CancellationToken cancellationToken)
    {
        string[] load = scenario == "s0" ? [] : ["--ccu", "10", "--warmup", "0.2", "--measure", "1"];
        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            ["--scenario", scenario, "--transport", "tls", "--client-stack", "dotnet", "--server-stack", serverStack, .. load, "--drain-timeout", "5", "--port", Port()]);

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass), stderr);
            Assert.That(Field(result, "transport"), Is.EqualTo("tls"));
            Assert.That(Field(result, "stack"), Is.EqualTo(serverStack == "dotnet" ? "dotnet" : "dotnet+netzlink"));
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), result);
            Assert.That(Number(result, "lost"), Is.Zero);
            Assert.That(Number(result, "connect_success"), Is.EqualTo(scenario == "s0" ? 1 : 10));
            Assert.That(Number(result, "recv"), Is.Positive.And.EqualTo(Number(result, "sent")));
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task TheDotnetClientOverTlsKeepsAnOpenModelSchedule(CancellationToken cancellationToken)
    {
        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            "--transport", "tls", "--stack", "dotnet", "--ccu", "10", "--rate", "2000", "--warmup", "0.2", "--measure", "1", "--drain-timeout", "5", "--port", Port());

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass), stderr);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), result);
            Assert.That(Number(result, "lost"), Is.Zero);
            // 2,000 packets a second for one measured second, every one of them echoed.
            Assert.That(Number(result, "sent"), Is.EqualTo(2000));
            Assert.That(Number(result, "recv"), Is.EqualTo(2000));
        });
    }

    [EachClientStack]
    [CancelAfter(120_000)]
    public async Task TheDotnetClientRefusesACertificateFromAnotherCa(string serverStack, CancellationToken cancellationToken)
    {
        using RunCertificates server = RunCertificates.Create();
        using RunCertificates other = RunCertificates.Create();

        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            "--scenario", "s2", "--transport", "tls", "--ccu", "3", "--measure", "1", "--connect-timeout", "2", "--connect-retries", "0", "--port", Port(),
            "--tls-cert", server.CertificateFile, "--tls-key", server.KeyFile, "--tls-ca", other.CaFile, "--client-stack", "dotnet", "--server-stack", serverStack);

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure), stderr);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Number(result, "connect_success"), Is.Zero, "a connection came up against a CA that did not sign the server");
            Assert.That(Number(result, "connect_fail"), Is.EqualTo(3));
            Assert.That(Field(Line(stdout, "METRIC "), "errors_by_errno"), Does.Contain("71:3"));
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task TheDotnetClientChecksTheHostName(CancellationToken cancellationToken)
    {
        using RunCertificates server = RunCertificates.Create();

        // The certificate names localhost, the machine, 127.0.0.1 and ::1, not 127.0.0.2 (still loopback;
        // with --role both the client dials the address the server binds).
        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            "--scenario", "s1", "--transport", "tls", "--ccu", "2", "--connect-timeout", "2", "--connect-retries", "0", "--port", Port(),
            "--bind-host", "127.0.0.2",
            "--tls-cert", server.CertificateFile, "--tls-key", server.KeyFile, "--tls-ca", server.CaFile, "--stack", "dotnet");

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure), stderr);
            Assert.That(Number(result, "connect_success"), Is.Zero, "a certificate that does not name the host was accepted");
            Assert.That(Number(result, "connect_fail"), Is.EqualTo(2));
        });
    }

    [RequiresStreamClient]
    [EachClientStack]
    [CancelAfter(120_000)]
    public async Task AServerCertificateFromAnotherCaIsRefused(string serverStack, CancellationToken cancellationToken)
    {
        using RunCertificates server = RunCertificates.Create();
        using RunCertificates other = RunCertificates.Create();

        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            "--scenario", "s1", "--transport", "tls", "--ccu", "3", "--connect-timeout", "2", "--connect-retries", "0", "--port", Port(),
            "--tls-cert", server.CertificateFile, "--tls-key", server.KeyFile, "--tls-ca", other.CaFile, "--server-stack", serverStack);

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure), stderr);
            Assert.That(Field(result, "transport"), Is.EqualTo("tls"));
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("FAIL"));
            Assert.That(Number(result, "connect_success"), Is.Zero, "a connection came up against a CA that did not sign the server");

            // The netzlink client says why: the TLS verification's reason (it had said connect_fail and errno 13 only).
            Assert.That(Field(result, "reason"), Does.Match(@"connected 0 of 3 \(failed 3, timed out 0\); TLS: [a-z ]+ \(X509 verify result (7|20)\)"), result);
        });
    }

    [EachClientStack]
    [CancelAfter(120_000)]
    public async Task AnUnusableCertificateIsAClearError(string serverStack, CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        string notPem = temp.File("server.pem");
        await File.WriteAllTextAsync(notPem, "not a certificate\n", cancellationToken);

        (int exitCode, string stdout, string stderr) = await RunAsync(
            null,
            cancellationToken,
            "--scenario", "s1", "--transport", "tls", "--ccu", "3", "--port", Port(), "--tls-cert", notPem, "--tls-ca", notPem, "--server-stack", serverStack);

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.Not.EqualTo(ExitCodes.Pass));
            Assert.That(stdout, Does.Not.Contain("pass_fail=PASS"));
            Assert.That(stderr, Does.Contain("cannot start the echo server on tls://127.0.0.1:")
                .And.Contain($"--tls-cert {notPem}")
                .And.Contain("must be readable PEM files"));
        });
    }

    private static string Port() => FreePort.Next().ToString(CultureInfo.InvariantCulture);

    private static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(
        Action<ScenarioSettings>? serverStarting, CancellationToken cancellationToken, params string[] args)
    {
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int exitCode = await new StressApp(stdout, stderr, serverStarting: serverStarting).RunAsync([.. args, "--quiet"], cancellationToken);
        return (exitCode, stdout.ToString(), stderr.ToString());
    }
}
