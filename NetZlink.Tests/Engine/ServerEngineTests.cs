// The server engine: accepting with the client engine's handler model, raw and framed delivery,
// slot reuse with new connection indexes, the connection limit, bind failures, and posts that
// never reach a later occupant of a reused slot.
namespace NetZlink.Tests.Engine;

public sealed class ServerEngineTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    [RequiresStreamFraming]
    [Test, CancelAfter(60_000)]
    public void ARawEchoServer_ReturnsEveryClientsBytesExactly()
    {
        Random random = Fuzz.Random(out _);
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], Framer = RawStreamFramer.Instance });
        var handler = new EchoHandler();
        server.Start(_ => handler);
        (string host, int port) = HostAndPort(server.BoundEndpoints[0]);

        var clients = Enumerable.Range(0, 10).Select(_ => new TcpClient(host, port)).ToList();
        try
        {
            Parallel.ForEach(clients, client =>
            {
                byte[] data = new byte[random.Next(1, 300_000)];
                lock (random)
                {
                    random.NextBytes(data);
                }

                var reader = Task.Run(() => RawTcpServer.ReadExactly(client.Client, data.Length, Patience));
                client.Client.Send(data);
                Assert.That(reader.Result, Is.EqualTo(data));
            });
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }

        Wait.Until(() => handler.Ended.Count == 10, "every client's end heard", Patience);
        Assert.That(handler.Connected.Select(c => c.Index), Is.Unique);
        Assert.That(handler.Ended.Select(e => e.Reason), Is.All.EqualTo(ConnectionEndReason.Remote));
        Assert.That(server.Fault, Is.Null);
    }

    [Test, CancelAfter(60_000)]
    public void SendAndClose_FromAnotherThread_AreRefused_AndTheConnectionGoesOn()
    {
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        var handler = new RunEchoHandler();
        EngineShard? shard = null;
        server.Start(s =>
        {
            shard = s;
            return handler;
        });
        (string host, int port) = HostAndPort(server.BoundEndpoints[0]);
        using var client = new TcpClient(host, port);
        Wait.Until(() => server.ReadCounters().Connected == 1, "the connection is up", Patience);
        Connection connection = shard!.ConnectionAt(0);

        byte[] packet = [0, 0, 0, 2, (byte)'h', (byte)'i'];
        var send = Assert.Throws<InvalidOperationException>(() => shard.Send(connection, packet))!;
        var close = Assert.Throws<InvalidOperationException>(() => shard.Close(connection))!;
        Assert.Multiple(() =>
        {
            Assert.That(send.Message, Does.Contain("EngineShard.Send").And.Contain("TrySend"));
            Assert.That(close.Message, Does.Contain("EngineShard.Close"));
        });

        // Nothing of the refused calls reached the connection: an echo still comes back whole.
        var reader = Task.Run(() => RawTcpServer.ReadExactly(client.Client, packet.Length, Patience));
        client.Client.Send(packet);
        Assert.That(reader.Result, Is.EqualTo(packet));
        Assert.That(server.Fault, Is.Null);
    }

    [Test, CancelAfter(60_000)]
    public void AHandlerThatTakesRuns_GetsWholePacketsInOrder_EveryOneCounted_AndEchoesARunWithOneSend()
    {
        Random random = Fuzz.Random(out _);
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        var handler = new RunEchoHandler();
        server.Start(_ => handler);
        (string host, int port) = HostAndPort(server.BoundEndpoints[0]);

        // Random packets (bodies 1 B .. 20 KB) written in random pieces: the handler sees runs of
        // whole packets; what comes back is the same stream.
        var stream = new List<byte>();
        int packets = random.Next(50, 400);
        for (int i = 0; i < packets; i++)
        {
            byte[] body = new byte[random.Next(1, 20_000)];
            random.NextBytes(body);
            stream.AddRange([(byte)(body.Length >> 24), (byte)(body.Length >> 16), (byte)(body.Length >> 8), (byte)body.Length]);
            stream.AddRange(body);
        }

        byte[] data = [.. stream];
        using var client = new TcpClient(host, port);
        var reader = Task.Run(() => RawTcpServer.ReadExactly(client.Client, data.Length, Patience));
        for (int at = 0; at < data.Length;)
        {
            int piece = Math.Min(data.Length - at, random.Next(1, 50_000));
            client.Client.Send(data, at, piece, SocketFlags.None);
            at += piece;
        }

        Assert.That(reader.Result, Is.EqualTo(data), "the echo is the stream, byte for byte");
        Assert.Multiple(() =>
        {
            Assert.That(handler.Packets, Is.EqualTo(packets), "every packet in some run");
            Assert.That(handler.Runs, Is.LessThanOrEqualTo(packets));
            Assert.That(handler.SinglePacketCalls, Is.Zero, "OnPacket is not called when OnPackets is overridden");
            Assert.That(server.ReadCounters().PacketsReceived, Is.EqualTo(packets), "the engine counts each packet of a run");
            Assert.That(server.Fault, Is.Null);
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void AClientEngine_AgainstAServerEngine_GetsEveryPacketBack()
    {
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        server.Start(_ => new EchoHandler());
        EveryConnectionGetsItsPacketBack(new EngineOptions { Endpoints = [server.BoundEndpoints[0]], ShardCount = 2, ConnectRetries = 0 });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void AClientEngine_AgainstAServerEngine_OverTls_GetsEveryPacketBack()
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }

        using var certs = TestCertificates.Create();
        using var server = new ServerEngine(new EngineOptions
        {
            Endpoints = ["tls://127.0.0.1:*"],
            Tls = new EngineTlsOptions { CertificateFile = certs.ServerCert, KeyFile = certs.ServerKey },
        });
        server.Start(_ => new EchoHandler());
        Assert.That(server.BoundEndpoints[0], Does.StartWith("tls://127.0.0.1:"));
        EveryConnectionGetsItsPacketBack(new EngineOptions
        {
            Endpoints = [server.BoundEndpoints[0]],
            ShardCount = 2,
            ConnectRetries = 0,
            Tls = new EngineTlsOptions { CaFile = certs.Ca, Hostname = "localhost" },
        });
    }

    /// <summary>A 20-connection ClientEngine with <paramref name="options"/>: every connection comes up, posts one packet carrying its index and gets it back.</summary>
    private static void EveryConnectionGetsItsPacketBack(EngineOptions options)
    {
        var received = new ConcurrentQueue<byte[]>();
        using var client = new ClientEngine(20, options);
        var connected = new ConcurrentBag<Connection>();
        client.Start(_ => new CollectingHandler(connected, received));
        Assert.That(client.ConnectsResolved.Wait(Patience), Is.True);
        Assert.That(connected, Has.Count.EqualTo(20));
        foreach (Connection connection in connected)
        {
            byte[] packet = [0, 0, 0, 4, (byte)connection.Index, 1, 2, 3];
            Assert.That(client.TrySend(connection, packet), Is.True);
        }

        Wait.Until(() => received.Count == 20, "20 echoed packets", Patience);
        Assert.That(received.Select(p => p[4]).Order(), Is.EqualTo(Enumerable.Range(0, 20).Select(i => (byte)i)));
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void AClientEngine_OverTls_WithTheWrongCa_FailsItsConnects()
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }

        using var certs = TestCertificates.Create();
        using var other = TestCertificates.Create();
        using var server = new ServerEngine(new EngineOptions
        {
            Endpoints = ["tls://127.0.0.1:*"],
            Tls = new EngineTlsOptions { CertificateFile = certs.ServerCert, KeyFile = certs.ServerKey },
        });
        server.Start(_ => new EchoHandler());
        using var client = new ClientEngine(3, new EngineOptions
        {
            Endpoints = [server.BoundEndpoints[0]],
            ShardCount = 1,
            ConnectRetries = 0,
            Tls = new EngineTlsOptions { CaFile = other.Ca },
        });
        var connected = new ConcurrentBag<Connection>();
        client.Start(_ => new CollectingHandler(connected, new ConcurrentQueue<byte[]>()));
        Assert.That(client.ConnectsResolved.Wait(Patience), Is.True);
        Assert.That(connected, Is.Empty);
        Assert.That(client.ReadCounters().ConnectFailed, Is.EqualTo(3));
    }

    // A tls:// or wss:// server without a certificate failed at Start with a bare EINVAL from the bind.
    [TestCase("tls://127.0.0.1:*")]
    [TestCase("wss://127.0.0.1:*")]
    public void ASecureEndpointWithoutACertificate_IsRefusedSayingWhatIsMissing(string endpoint)
    {
        var error = Assert.Throws<ArgumentException>(() => _ = new ServerEngine(new EngineOptions { Endpoints = [endpoint] }))!;
        Assert.That(error.Message, Does.Contain(endpoint).And.Contain("Tls.CertificateFile"));
    }

    [Test, CancelAfter(60_000)]
    public void SlotsAreReused_WithANewIndexEachTime_AndTheLimitRefusesTheRest()
    {
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], MaxConnections = 4 });
        var handler = new EchoHandler();
        server.Start(_ => handler);
        (string host, int port) = HostAndPort(server.BoundEndpoints[0]);

        for (int round = 0; round < 3; round++)
        {
            var clients = Enumerable.Range(0, 4).Select(_ => new TcpClient(host, port)).ToList();
            Wait.Until(() => handler.Connected.Count == 4 * (round + 1), "four accepted", Patience);
            foreach (TcpClient client in clients)
            {
                // A packet with a one-byte body: delivered and echoed at once.
                client.Client.Send([0, 0, 0, 1, 7]);
                Assert.That(RawTcpServer.ReadExactly(client.Client, 5, Patience), Is.EqualTo(new byte[] { 0, 0, 0, 1, 7 }));
            }

            if (round == 2)
            {
                // A fifth at once: every slot is taken, so it is closed and counted.
                using var extra = new TcpClient(host, port);
                extra.Client.ReceiveTimeout = (int)Patience.TotalMilliseconds;
                Assert.That(extra.Client.Receive(new byte[1]), Is.Zero, "the connection beyond MaxConnections was closed");
                // Counted by the shard when it refuses; the peer can see the close first.
                Wait.Until(() => server.ReadCounters().ConnectFailed == 1, "the refused connection counted", Patience);
                Assert.That(server.ReadCounters().ConnectFailed, Is.EqualTo(1));
            }

            clients.ForEach(c => c.Dispose());
            Wait.Until(() => handler.Ended.Count == 4 * (round + 1), "four ended", Patience);
        }

        Assert.Multiple(() =>
        {
            Assert.That(handler.Connected.Select(c => c.Index), Is.Unique, "a new index for every connection");
            Assert.That(handler.Connected.Select(c => c.Slot).Distinct().Count(), Is.EqualTo(4), "the four slots reused");
            Assert.That(handler.Ended.Select(e => e.Connection.Index).Order(), Is.EqualTo(handler.Connected.Select(c => c.Index).Order()));
        });
    }

    [Test, CancelAfter(60_000)]
    public void APostForAnEndedConnection_NeverReachesTheNextOneInItsSlot()
    {
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], MaxConnections = 1 });
        var handler = new EchoHandler();
        server.Start(_ => handler);
        (string host, int port) = HostAndPort(server.BoundEndpoints[0]);

        var first = new TcpClient(host, port);
        Wait.Until(() => handler.Connected.Count == 1, "first accepted", Patience);
        Connection old = handler.Connected.Single();
        first.Dispose();
        Wait.Until(() => handler.Ended.Count == 1, "first ended", Patience);

        using var second = new TcpClient(host, port);
        Wait.Until(() => handler.Connected.Count == 2, "second accepted", Patience);
        Assert.That(handler.Connected[1].Slot, Is.EqualTo(old.Slot), "the slot was reused");
        Assert.That(server.TrySend(old, [0, 0, 0, 3, 1, 2, 3]), Is.True);
        Assert.That(server.TrySend(handler.Connected[1], [0, 0, 0, 2, 9, 9]), Is.True);
        Assert.That(RawTcpServer.ReadExactly(second.Client, 6, Patience), Is.EqualTo(new byte[] { 0, 0, 0, 2, 9, 9 }), "only the second's own post arrived");
        Wait.Until(() => server.ReadSendQueueCounters().DroppedClosed == 1, "the old post dropped as closed", Patience);
    }

    [Test, CancelAfter(60_000)]
    public void AFramerThatNeedsRaw_OnALibraryWithoutIt_IsRefusedAtStart_NamingTheFramerAndTheLibrary()
    {
        if (NativeNeeds.StreamFramingMissing is null)
        {
            Assert.Ignore("the native library has RAW framing: nothing to refuse");
        }

        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], Framer = RawStreamFramer.Instance });
        var refused = Assert.Throws<ZlinkNotSupportedException>(() => server.Start(_ => new EchoHandler()))!;
        TestContext.Out.WriteLine(refused.Message);
        Assert.That(refused.Message, Does.Contain(nameof(RawStreamFramer)).And.Contain(ZlinkLibrary.LoadedFrom).And.Contain("RAW"));
        Assert.That(server.IsRunning, Is.False);
        Assert.That(server.Stopped.IsCompleted, Is.True);
    }

    [Test, CancelAfter(60_000)]
    public void ABindThatFails_ThrowsAnEndpointException_AndLeavesNothingBound()
    {
        using var first = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        first.Start(_ => new EchoHandler());
        using var second = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*", first.BoundEndpoints[0]] });
        var ex = Assert.Throws<EndpointException>(() => second.Start(_ => new EchoHandler()));
        TestContext.Out.WriteLine(ex!.Message);
        Assert.That(ex.Message, Does.Contain(first.BoundEndpoints[0]));
        Assert.That(second.Stopped.IsCompleted, Is.True);
        Assert.That(second.IsRunning, Is.False);
    }

    private static (string Host, int Port) HostAndPort(string endpoint)
    {
        var uri = new Uri(endpoint.Replace("tcp://", "http://", StringComparison.Ordinal));
        return (uri.Host, uri.Port);
    }

    internal sealed class EchoHandler : IConnectionHandler
    {
        private readonly object _gate = new();
        private readonly List<Connection> _connected = new();
        private readonly List<(Connection Connection, ConnectionEndReason Reason)> _ended = new();

        public List<Connection> Connected { get { lock (_gate) { return _connected.ToList(); } } }

        public List<(Connection Connection, ConnectionEndReason Reason)> Ended { get { lock (_gate) { return _ended.ToList(); } } }

        public void OnConnected(EngineShard shard, Connection connection)
        {
            lock (_gate)
            {
                _connected.Add(connection);
            }
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            // A Full or Closed here would lose bytes: the echo tests then fail on what they read.
            _ = shard.Send(connection, packet);
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
            lock (_gate)
            {
                _ended.Add((connection, reason));
            }
        }

        public void OnPass(EngineShard shard)
        {
        }
    }

    private sealed class CollectingHandler(ConcurrentBag<Connection> connected, ConcurrentQueue<byte[]> received) : IConnectionHandler
    {
        public void OnConnected(EngineShard shard, Connection connection) => connected.Add(connection);

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => received.Enqueue(packet.ToArray());

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }

    private sealed class RunEchoHandler : IConnectionHandler
    {
        public int Runs;
        public int Packets;
        public int SinglePacketCalls;

        public void OnConnected(EngineShard shard, Connection connection)
        {
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => SinglePacketCalls++;

        public void OnPackets(EngineShard shard, Connection connection, ReadOnlySpan<byte> packets)
        {
            Runs++;
            for (ReadOnlySpan<byte> rest = packets; !rest.IsEmpty;)
            {
                int length = 4 + System.Buffers.Binary.BinaryPrimitives.ReadInt32BigEndian(rest);
                Packets++;
                rest = rest[length..];
            }

            Assert.That(shard.Send(connection, packets), Is.EqualTo(SendResult.Sent).Or.EqualTo(SendResult.Queued));
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }
}
