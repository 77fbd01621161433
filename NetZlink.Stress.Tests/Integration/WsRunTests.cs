// --transport ws and wss for real: the dotnet client and echo server (System.Net.WebSockets after
// the tool's own upgrade; wss over SslStream with a CA made per run) against each other always,
// and across stacks (dotnet client against the netzlink server, netzlink client against the dotnet
// server) when the native library has ws; s4 with every transport's rows; the upgrade's refusals.
using System.Text;

namespace NetZlink.Stress.Tests.Integration;

public sealed class WsRunTests : IntegrationFixture
{
    [TestCase("ws", "dotnet", "dotnet", "s0")]
    [TestCase("ws", "dotnet", "dotnet", "s2")]
    [TestCase("wss", "dotnet", "dotnet", "s2")]
    [TestCase("ws", "dotnet", "netzlink", "s0")]
    [TestCase("ws", "dotnet", "netzlink", "s2")]
    [TestCase("wss", "dotnet", "netzlink", "s0")]
    [TestCase("wss", "dotnet", "netzlink", "s2")]
    [TestCase("ws", "netzlink", "dotnet", "s0")]
    [TestCase("ws", "netzlink", "dotnet", "s2")]
    [TestCase("wss", "netzlink", "dotnet", "s0")]
    [TestCase("wss", "netzlink", "dotnet", "s2")]
    [TestCase("wss", "netzlink", "netzlink", "s2")]
    [CancelAfter(120_000)]
    public async Task EveryStackPairRunsOverWebSocket(string transport, string clientStack, string serverStack, string scenario, CancellationToken cancellationToken)
    {
        ClientStacks.Require(clientStack);

        if ((clientStack == "netzlink" || serverStack == "netzlink") && !TransportCatalog.IsAvailable(transport))
        {
            Assert.Ignore($"the native library has no {transport} ({TransportCatalog.UnavailableReason(transport)})");
        }

        string[] load = scenario == "s0" ? [] : ["--ccu", "10", "--warmup", "0.2", "--measure", "1"];
        (int exitCode, string stdout, string stderr) = await RunAsync(
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
    }

    [Test]
    [CancelAfter(240_000)]
    public async Task S4OnTheDotnetStackHasEveryTransportsRows(CancellationToken cancellationToken)
    {
        (int exitCode, string stdout, string stderr) = await RunAsync(
            cancellationToken, "--scenario", "s4", "--stack", "dotnet", "--ccu", "5", "--warmup", "0.2", "--measure", "0.5", "--drain-timeout", "5", "--port", Port());

        string[] metrics = stdout.Split('\n').Where(l => l.StartsWith("METRIC ", StringComparison.Ordinal)).ToArray();
        string[] results = stdout.Split('\n').Where(l => l.StartsWith("RESULT ", StringComparison.Ordinal)).ToArray();
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass), stderr);
            Assert.That(metrics.Select(m => Field(m, "scenario_id")), Is.EqualTo(new[]
            {
                "s4-tcp-s0", "s4-tcp-s1", "s4-tcp-s2", "s4-tls-s0", "s4-tls-s1", "s4-tls-s2",
                "s4-ws-s0", "s4-ws-s1", "s4-ws-s2", "s4-wss-s0", "s4-wss-s1", "s4-wss-s2",
            }));
            Assert.That(results.Select(r => Field(r, "pass_fail")), Has.All.EqualTo("PASS"));
            Assert.That(results.Where(r => Field(r, "scenario") == "s2").Select(r => Number(r, "recv")), Has.All.Positive);
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task TheDotnetClientOverWssRefusesACertificateFromAnotherCa(CancellationToken cancellationToken)
    {
        using NetZlink.Stress.Tls.RunCertificates server = NetZlink.Stress.Tls.RunCertificates.Create();
        using NetZlink.Stress.Tls.RunCertificates other = NetZlink.Stress.Tls.RunCertificates.Create();

        (int exitCode, string stdout, string stderr) = await RunAsync(
            cancellationToken,
            "--scenario", "s2", "--transport", "wss", "--ccu", "3", "--measure", "1", "--connect-timeout", "2", "--connect-retries", "0", "--port", Port(),
            "--tls-cert", server.CertificateFile, "--tls-key", server.KeyFile, "--tls-ca", other.CaFile, "--stack", "dotnet");

        string result = Line(stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure), stderr);
            Assert.That(Number(result, "connect_success"), Is.Zero, "a connection came up against a CA that did not sign the server");
            Assert.That(Field(Line(stdout, "METRIC "), "errors_by_errno"), Does.Contain("71:3"));
        });
    }

    [TestCase("GET /other HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", "HTTP/1.1 404 ")]
    [TestCase("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", "HTTP/1.1 400 ")]
    [TestCase("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n", "HTTP/1.1 400 ")]
    [TestCase("POST / HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ")]
    [TestCase("GET /?q=1 HTTP/1.1\r\nHost: h\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n")]
    [CancelAfter(30_000)]
    public async Task TheDotnetServerAnswersEachUpgradeAsTheContractSays(string request, string answerStart, CancellationToken cancellationToken)
    {
        using var server = new NetZlink.Stress.DotnetStack.DotnetStreamEchoServer(new ScenarioSettings { Transport = "ws", BindHost = "127.0.0.1", Port = 0 });
        server.Start();
        using var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, server.Port, cancellationToken);
        NetworkStream stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request), cancellationToken);
        byte[] buffer = new byte[1024];
        int read, filled = 0;
        while ((read = await stream.ReadAsync(buffer.AsMemory(filled), cancellationToken)) > 0)
        {
            filled += read;
            if (Encoding.ASCII.GetString(buffer, 0, filled).Contains("\r\n\r\n", StringComparison.Ordinal))
            {
                break;
            }
        }

        string answer = Encoding.ASCII.GetString(buffer, 0, filled);
        Assert.That(answer, Does.StartWith(answerStart));
        if (!answerStart.Contains("101", StringComparison.Ordinal))
        {
            // Refused: the server closes the connection after its answer.
            Assert.That(await stream.ReadAsync(buffer, cancellationToken), Is.Zero);
            Assert.That(server.RefusedUpgrades, Is.EqualTo(1));
        }
    }

    [Test]
    [CancelAfter(30_000)]
    public void TheAcceptValueIsTheContractOne()
    {
        Assert.That(WebSocketHandshake.AcceptFor("dGhlIHNhbXBsZSBub25jZQ=="), Is.EqualTo("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }

    private static string Port() => FreePort.Next().ToString(CultureInfo.InvariantCulture);

    private static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(CancellationToken cancellationToken, params string[] args)
    {
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int exitCode = await new StressApp(stdout, stderr).RunAsync([.. args, "--quiet"], cancellationToken);
        return (exitCode, stdout.ToString(), stderr.ToString());
    }
}
