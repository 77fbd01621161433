// Issue 23: an engine takes its own copy of EngineOptions (EngineOptions.Snapshot) before it
// validates them, so changing the options object, or the endpoint list it was given, after the
// engine was constructed changes nothing in that engine.
namespace NetZlink.Tests.Engine;

public sealed class OptionsSnapshotTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    [Test, CancelAfter(60_000)]
    public void AServer_KeepsTheOptionsItWasBuiltWith()
    {
        var endpoints = new List<string> { "tcp://127.0.0.1:*" };
        var options = new EngineOptions { Endpoints = endpoints, MaxPacketSize = 64 * 1024, Name = "snapshot-server" };
        using var server = new ServerEngine(options);

        // Everything changed after construction: more endpoints (in the caller's list and as a new
        // list), a packet limit the echo below would break, an endpoint that cannot be bound.
        endpoints.Add("tcp://256.0.0.1:1");
        options.Endpoints = ["tcp://256.0.0.1:1", "tcp://256.0.0.1:2"];
        options.MaxPacketSize = 8;
        options.MaxConnections = 0;
        options.Name = "changed";
        options.Tls = new EngineTlsOptions { CertificateFile = "/nonexistent.pem" };

        var handler = new ServerEngineTests.EchoHandler();
        server.Start(_ => handler);
        Assert.Multiple(() =>
        {
            Assert.That(server.BoundEndpoints, Has.Count.EqualTo(1), "one shard: the one endpoint given at construction");
            Assert.That(server.BoundEndpoints[0], Does.StartWith("tcp://127.0.0.1:"));
            Assert.That(server.Name, Is.EqualTo("snapshot-server"));
        });

        var uri = new Uri(server.BoundEndpoints[0].Replace("tcp://", "http://", StringComparison.Ordinal));
        using var client = new TcpClient(uri.Host, uri.Port);
        Random random = Fuzz.Random(out _);
        byte[] packet = new byte[4 + random.Next(1000, 60_000)];
        random.NextBytes(packet);
        BinaryPrimitives.WriteInt32BigEndian(packet, packet.Length - 4);
        var reader = Task.Run(() => RawTcpServer.ReadExactly(client.Client, packet.Length, Patience));
        client.Client.Send(packet);
        Assert.That(reader.Result, Is.EqualTo(packet), "a packet above the later MaxPacketSize (8) still echoes whole");
        Assert.That(server.Fault, Is.Null);
        Assert.That(handler.Ended, Is.Empty, "no connection was ended for its size");
    }

    [Test, CancelAfter(60_000)]
    public void AClient_ConnectsWhereItWasToldAtConstruction()
    {
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        var serverHandler = new ServerEngineTests.EchoHandler();
        server.Start(_ => serverHandler);

        var options = new EngineOptions { Endpoints = [server.BoundEndpoints[0]], ConnectRetries = 3 };
        using var engine = new ClientEngine(1, options);
        options.Endpoints = ["tcp://127.0.0.1:1"];
        options.ConnectRetries = -1;
        options.ConnectTimeout = TimeSpan.Zero;
        options.Reconnect = new ReconnectPolicy { MaxAttempts = 1 };

        var handler = new RecordingHandler();
        engine.Start(_ => handler);
        Assert.That(engine.ConnectsResolved.Wait(Patience), Is.True, "the connection resolved");
        Assert.Multiple(() =>
        {
            Assert.That(handler.Connected, Has.Count.EqualTo(1), "connected to the server named at construction");
            Assert.That(handler.Failures, Is.Empty);
            Assert.That(engine.Fault, Is.Null);
        });
    }

    [Test]
    public void TheSnapshot_CopiesTheListAndTheNestedOptions()
    {
        var endpoints = new List<string> { "tcp://127.0.0.1:5555" };
        var tls = new EngineTlsOptions { Hostname = "a" };
        var reconnect = new ReconnectPolicy { MaxAttempts = 2 };
        var options = new EngineOptions { Endpoints = endpoints, Tls = tls, Reconnect = reconnect, MaxPacketSize = 100 };
        EngineOptions copy = options.Snapshot();
        endpoints.Add("tcp://127.0.0.1:6666");
        tls.Hostname = "b";
        reconnect.MaxAttempts = 9;
        options.MaxPacketSize = 200;
        Assert.Multiple(() =>
        {
            Assert.That(copy.Endpoints, Is.EqualTo(new[] { "tcp://127.0.0.1:5555" }));
            Assert.That(copy.Tls!.Hostname, Is.EqualTo("a"));
            Assert.That(copy.Reconnect!.MaxAttempts, Is.EqualTo(2));
            Assert.That(copy.MaxPacketSize, Is.EqualTo(100));
            Assert.That(copy.Framer, Is.SameAs(options.Framer), "the framer is shared");
        });
    }
}
