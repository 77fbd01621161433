// The gateway sample end to end: started as its own process, fed requests by DEALER clients (one
// with a REQ-style empty delimiter), stopped with SIGTERM. The backend is a local STREAM echo (a
// ServerEngine returning every packet), so every reply must be exactly its request. The gateway
// connects to its backend with the client engine: on a library whose STREAM sockets cannot
// connect (zlink 1.3) the tests that reach the backend are ignored.
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using NetZlink.Engine;

namespace NetZlink.Samples.Tests;

[TestFixture]
[NonParallelizable]
public sealed partial class GatewayTests
{
    private static readonly TimeSpan ReplyPatience = TimeSpan.FromSeconds(20);

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task ServesRequestsThroughTheBackendAndStopsCleanlyOnSigterm(CancellationToken cancellationToken)
    {
        int seed = SeedFor(nameof(ServesRequestsThroughTheBackendAndStopsCleanlyOnSigterm));
        var random = new Random(seed);
        using var backend = EchoBackend();
        using GatewayProcess gateway = GatewayProcess.Start("--Gateway:FrontendEndpoint=tcp://127.0.0.1:*", $"--Gateway:BackendEndpoint={backend.BoundEndpoints[0]}");
        string frontend = await ConnectedFrontendAsync(gateway, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.Linger = 0;
        dealer.Connect(frontend);
        const int Requests = 300;
        var outstanding = new HashSet<string>(StringComparer.Ordinal);
        for (int i = 0; i < Requests; i++)
        {
            string body = $"{i}:" + new string((char)('a' + random.Next(26)), random.Next(0, 4000));
            outstanding.Add(body);
            dealer.Send(Encoding.UTF8.GetBytes(body));
        }

        var reply = new List<byte[]>();
        for (int i = 0; i < Requests; i++)
        {
            reply.Clear(); // TryReceiveMultipart appends
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"reply {i} of {Requests} did not come (seed {seed}); {outstanding.Count} outstanding\n{gateway.Output}");
            Assert.That(reply, Has.Count.EqualTo(1), "a DEALER reply is one frame: the body");
            string text = Encoding.UTF8.GetString(reply[0]);
            Assert.That(outstanding.Remove(text), Is.True, $"reply '{Clip(text)}' matches no outstanding request (seed {seed})\n{gateway.Output}");
        }

        // A client that puts an empty delimiter before its body (REQ-style) gets it back before the reply.
        using ZlinkSocket delimited = context.CreateSocket(ZlinkSocketType.Dealer);
        delimited.Linger = 0;
        delimited.Connect(frontend);
        delimited.SendMultipart(new[] { Array.Empty<byte>(), "with a delimiter"u8.ToArray() });
        reply.Clear();
        Assert.That(delimited.TryReceiveMultipart(reply, ReplyPatience), Is.True, "the delimited request got no reply");
        Assert.That(reply, Has.Count.EqualTo(2));
        Assert.That(reply[0], Is.Empty);
        Assert.That(Encoding.UTF8.GetString(reply[1]), Is.EqualTo("with a delimiter"));

        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
            Assert.That(gateway.Output, Does.Contain($"gateway stopped: {Requests + 1} requests served, 0 failed"));
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task ABackendThatNeverAnswersFailsTheRequestsAndSigtermStillStopsIt(CancellationToken cancellationToken)
    {
        using var blackHole = new TcpListener(IPAddress.Loopback, 0);
        blackHole.Start();
        var accepted = new List<System.Net.Sockets.Socket>();
        Task accepting = Task.Run(async () =>
        {
            while (true)
            {
                accepted.Add(await blackHole.AcceptSocketAsync(cancellationToken));
            }
        }, cancellationToken);
        int port = ((IPEndPoint)blackHole.LocalEndpoint).Port;
        using GatewayProcess gateway = GatewayProcess.Start(
            "--Gateway:FrontendEndpoint=tcp://127.0.0.1:*", $"--Gateway:BackendEndpoint=tcp://127.0.0.1:{port}", "--Gateway:BackendTimeout=00:00:02");
        string frontend = await ListeningEndpointAsync(gateway, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.Linger = 0;
        dealer.Connect(frontend);
        dealer.Send("first"u8);
        var reply = new List<byte[]>();
        Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"no error reply came\n{gateway.Output}");
        Assert.That(Encoding.UTF8.GetString(reply[0]), Does.StartWith("error: "));

        // Two more requests, then SIGTERM while they wait for the backend: the service answers
        // them (with errors) within its timeout and exits 0.
        dealer.Send("second"u8);
        dealer.Send("third"u8);
        await Task.Delay(300, cancellationToken);
        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
            Assert.That(gateway.Output, Does.Contain("gateway stopped: 0 requests served, 3 failed"));
        });
        for (int i = 0; i < 2; i++)
        {
            reply.Clear();
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"error reply {i} for the requests in flight at SIGTERM did not come\n{gateway.Output}");
            Assert.That(Encoding.UTF8.GetString(reply[0]), Does.StartWith("error: "));
        }

        blackHole.Stop();
        foreach (System.Net.Sockets.Socket s in accepted)
        {
            s.Dispose();
        }

        _ = accepting.ContinueWith(_ => { }, TaskScheduler.Default);
    }

    [TestCase("--Gateway:BackendTimeout=-00:00:01", 2, "gateway: Gateway:BackendTimeout must be positive")]
    [TestCase("--Gateway:BackendTimeout=banana", 2, "gateway: Failed to convert configuration value 'banana' at 'Gateway:BackendTimeout'")]
    [TestCase("--Gateway:MaxRequestBytes=16777216", 2, "gateway: Gateway:MaxRequestBytes must be 1..16777212")]
    [TestCase("--Gateway:FrontendEndpoint=garbage", 2, "gateway cannot start:")]
    [TestCase("--Gateway:BackendEndpoint=tcp://no-such-host.invalid:1", 2, "gateway cannot start:")]
    [TestCase("--Gateway:BackendEndpoint=tcp://127.0.0.1:CLOSED", 3, "gateway stopping: the backend cannot be reached")]
    [CancelAfter(60_000)]
    public async Task BadSettingsOrAnUnreachableBackendStopItWithOneLineAndItsExitCode(string setting, int exitCode, string text, CancellationToken cancellationToken)
    {
        if (setting.EndsWith(":CLOSED", StringComparison.Ordinal))
        {
            // This one gets as far as connecting to the backend.
            NativeNeeds.RequireStreamClient();
        }

        setting = setting.Replace("CLOSED", ClosedPort().ToString(System.Globalization.CultureInfo.InvariantCulture), StringComparison.Ordinal);
        using GatewayProcess gateway = GatewayProcess.Start("--Gateway:FrontendEndpoint=tcp://127.0.0.1:*", "--Gateway:BackendEndpoint=tcp://127.0.0.1:9", setting);
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(gateway.ExitCode, Is.EqualTo(exitCode), gateway.Output);
            Assert.That(gateway.Output, Does.Contain(text));
            Assert.That(gateway.Output, Does.Not.Contain("   at "), "a stack trace instead of one line");
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task AClientThatSendsThousandsBeforeReadingGetsEveryReply(CancellationToken cancellationToken)
    {
        using var backend = EchoBackend();
        using GatewayProcess gateway = GatewayProcess.Start("--Gateway:FrontendEndpoint=tcp://127.0.0.1:*", $"--Gateway:BackendEndpoint={backend.BoundEndpoints[0]}");
        string frontend = await ConnectedFrontendAsync(gateway, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.Linger = 0;
        dealer.SendHighWaterMark = 0;
        dealer.Connect(frontend);
        const int Requests = 5000;
        for (int i = 0; i < Requests; i++)
        {
            dealer.Send(Encoding.UTF8.GetBytes($"p{i}"));
        }

        // One big request in the middle of it (within MaxRequestBytes) changes nothing for the others.
        byte[] big = new byte[60_000];
        Random.Shared.NextBytes(big);
        dealer.Send(big);

        var seen = new HashSet<string>(StringComparer.Ordinal);
        var reply = new List<byte[]>();
        bool bigBack = false;
        for (int i = 0; i < Requests + 1; i++)
        {
            reply.Clear();
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"{seen.Count} of {Requests} replies came, then none\n{gateway.Output}");
            if (reply[0].Length == big.Length)
            {
                Assert.That(reply[0], Is.EqualTo(big));
                bigBack = true;
                continue;
            }

            Assert.That(seen.Add(Encoding.UTF8.GetString(reply[0])), Is.True, "a reply came twice");
        }

        Assert.That(bigBack, Is.True);
        Assert.That(seen, Has.Count.EqualTo(Requests));
        Assert.That(Enumerable.Range(0, Requests).All(i => seen.Contains($"p{i}")), Is.True, "every request got its own reply");
        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
    }

    /// <summary>A STREAM echo returning every packet ([u32 BE length][body], the engine's default framer), as the backend.</summary>
    private static ServerEngine EchoBackend()
    {
        var backend = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        backend.Start(_ => new EchoHandler());
        return backend;
    }

    /// <summary>The gateway's frontend endpoint, once it listens and its backend connection is up.</summary>
    private static async Task<string> ConnectedFrontendAsync(GatewayProcess gateway, CancellationToken cancellationToken)
    {
        string frontend = await ListeningEndpointAsync(gateway, cancellationToken);
        await gateway.WaitForLineAsync(l => l.Contains("backend connected", StringComparison.Ordinal), cancellationToken);
        return frontend;
    }

    private static int ClosedPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    private static async Task<string> ListeningEndpointAsync(GatewayProcess gateway, CancellationToken cancellationToken)
    {
        string line = await gateway.WaitForLineAsync(l => Listening().IsMatch(l), cancellationToken);
        return Listening().Match(line).Groups[1].Value;
    }

    private static int SeedFor(string test)
    {
        string? fixedSeed = Environment.GetEnvironmentVariable("NETZLINK_FUZZ_SEED");
        int seed = fixedSeed is null ? Random.Shared.Next() : int.Parse(fixedSeed, System.Globalization.CultureInfo.InvariantCulture);
        TestContext.Out.WriteLine($"{test}: seed {seed} (replay with NETZLINK_FUZZ_SEED={seed})");
        return seed;
    }

    private static string Clip(string text) => text.Length <= 40 ? text : text[..40] + "...";

    [GeneratedRegex(@"gateway listening on (tcp://[0-9.]+:\d+)")]
    private static partial Regex Listening();

    private sealed class EchoHandler : IConnectionHandler
    {
        public void OnConnected(EngineShard shard, Connection connection)
        {
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => shard.Send(connection, packet);

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }
}
