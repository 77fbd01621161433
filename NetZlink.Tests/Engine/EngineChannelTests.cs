// The contracts around the channel API: a handler speaks first from OnConnected (client and
// server), the channel reports connects, failures and ends and completes when the engine stops
// (with its fault), a slow reader stops its shard from reading instead of losing packets, and
// StopAsync, DisposeAsync and the channel's disposal end under traffic without hanging.
namespace NetZlink.Tests.Engine;

[RequiresStreamClient]
public sealed class EngineChannelTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);
    private static readonly byte[] Hello = [0, 0, 0, 5, (byte)'h', (byte)'e', (byte)'l', (byte)'l', (byte)'o'];
    private static readonly byte[] Welcome = [0, 0, 0, 7, (byte)'w', (byte)'e', (byte)'l', (byte)'c', (byte)'o', (byte)'m', (byte)'e'];
    [Test, CancelAfter(60_000)]
    public void AHandler_SendsFromOnConnected_OnBothEngines()
    {
        var atServer = new SpeakFirstHandler(Welcome);
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        server.Start(_ => atServer);
        var atClient = new SpeakFirstHandler(Hello);
        using var client = new ClientEngine(3, new EngineOptions { Endpoints = [server.BoundEndpoints[0]], ShardCount = 2 });
        client.Start(_ => atClient);

        Wait.Until(() => atServer.PacketCount == 3 && atClient.PacketCount == 3, "each side's first packet at the other");
        Assert.Multiple(() =>
        {
            Assert.That(atServer.Results, Is.All.EqualTo(SendResult.Sent), "the server's sends from OnConnected");
            Assert.That(atClient.Results, Is.All.EqualTo(SendResult.Sent), "the client's sends from OnConnected");
            Assert.That(atServer.Packets, Has.All.EqualTo(Hello));
            Assert.That(atClient.Packets, Has.All.EqualTo(Welcome));
        });
    }
    [Test, CancelAfter(60_000)]
    public async Task TheChannel_ReportsConnectsAndFailures_AndCompletesWhenTheEngineStops()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        int closed = RawTcpServer.ClosedPort();
        await using var engine = new ClientEngine(4, new EngineOptions
        {
            Endpoints = [server.Engine.BoundEndpoints[0], $"tcp://127.0.0.1:{closed}"],
            ShardCount = 2,
            ConnectRetries = 0,
        });
        EngineChannel channel = engine.StartChannel();
        var events = new List<EngineEvent>();
        var reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    lock (events)
                    {
                        events.Add(e);
                    }

                    if (e.Kind == EngineEventKind.Connected)
                    {
                        // The connection may be written to at once: the echo proves it was sent.
                        Assert.That(await channel.SendAsync(e.Connection, Hello), Is.True);
                    }
                }
            }
        });

        await engine.ConnectsResolved.WaitAsync(Patience);
        Wait.Until(() => Count(events, EngineEventKind.Packet) == 2, "the echoes of the two connections that came up");
        await engine.StopAsync().WaitAsync(Patience);
        await reading.WaitAsync(Patience);

        Assert.Multiple(() =>
        {
            Assert.That(Count(events, EngineEventKind.Connected), Is.EqualTo(2), "connections 0 and 2 reach the server");
            Assert.That(Count(events, EngineEventKind.ConnectFailed), Is.EqualTo(2), "connections 1 and 3 go to a closed port");
            Assert.That(events.Where(e => e.Kind == EngineEventKind.ConnectFailed).Select(e => e.Connection.Index), Is.EquivalentTo(new[] { 1, 3 }));
            Assert.That(events.Where(e => e.Kind == EngineEventKind.ConnectFailed).All(e => e.Failure!.Value.Errno == 111), Is.True, "ECONNREFUSED");
            Assert.That(events.Where(e => e.Kind == EngineEventKind.Disconnected).Select(e => (e.Connection.Index, e.Reason)),
                Is.EquivalentTo(new[] { (0, ConnectionEndReason.EngineStopped), (2, ConnectionEndReason.EngineStopped) }));
            Assert.That(channel.Reader.Completion.IsCompletedSuccessfully, Is.True);
            Assert.That(channel.BuffersOut, Is.Zero);
        });
    }
    [Test, CancelAfter(60_000)]
    public async Task TheReader_CompletesWithTheEnginesFault()
    {
        using var server = new StreamEchoServer();
        var context = new ZlinkContext();
        await using var engine = new ClientEngine(2, new EngineOptions { Endpoints = [server.Endpoint], ShardCount = 2 }, context);
        EngineChannel channel = engine.StartChannel();
        await engine.ConnectsResolved.WaitAsync(Patience);
        context.Dispose();

        int disconnects = 0;
        Exception? thrown = null;
        try
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync().WithCancellation(Wait.Token))
            {
                disconnects += e.Kind == EngineEventKind.Disconnected ? 1 : 0;
                e.Dispose();
            }
        }
#pragma warning disable CA1031 // asserted below
        catch (Exception e)
#pragma warning restore CA1031
        {
            thrown = e;
        }

        Assert.Multiple(() =>
        {
            Assert.That(thrown, Is.InstanceOf<ContextTerminatedException>(), "the reader ends with the engine's Fault");
            Assert.That(thrown, Is.SameAs(engine.Fault));
            Assert.That(disconnects, Is.EqualTo(2), "every connection's end was read before the fault");
        });
    }
    [Test, CancelAfter(120_000)]
    public async Task ASlowReader_StopsItsShardFromReading_AndLosesNothing()
    {
        const int Capacity = 64;
        const int Body = 96;
        const int PacketCount = 20_000;
        using var listener = new TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        // Small kernel buffers at both ends, so that 2 MB cannot all wait in them.
        await using var engine = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{((System.Net.IPEndPoint)listener.LocalEndpoint).Port}"],
            ReceiveBufferSize = 64 * 1024,
        });
        EngineChannel channel = engine.StartChannel(new EngineChannelOptions { ReceiveCapacityPerShard = Capacity });
        using System.Net.Sockets.Socket peer = await listener.AcceptSocketAsync(Wait.Token);
        peer.SendBufferSize = 64 * 1024;

        // The peer writes 20,000 packets (about 2 MB) as fast as TCP lets it.
        var writer = Task.Run(() =>
        {
            byte[] all = new byte[PacketCount * (4 + Body)];
            for (int p = 0; p < PacketCount; p++)
            {
                BinaryPrimitives.WriteUInt32BigEndian(all.AsSpan(p * (4 + Body)), Body);
                BinaryPrimitives.WriteInt32BigEndian(all.AsSpan((p * (4 + Body)) + 4), p);
            }

            peer.Send(all);
        });

        // Nobody reads: the shard stops after the capacity, plus at most one read's packets.
        long bound = Capacity + (new EngineOptions().ReceiveChunkSize / (4 + Body)) + 1;
        Wait.Until(() => channel.ReceivePauses >= 1, "the shard's first pause");
        await Task.Delay(500);
        long held = engine.ReadCounters().PacketsReceived;
        Assert.That(held, Is.LessThanOrEqualTo(bound), "packets the engine took while the reader was behind");
        Assert.That(writer.IsCompleted, Is.False, "the peer is held back by TCP");

        int next = 0;
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync().WithCancellation(Wait.Token))
        {
            using (e)
            {
                if (e.Kind != EngineEventKind.Packet)
                {
                    continue;
                }

                Assert.That(BinaryPrimitives.ReadInt32BigEndian(e.Packet[4..]), Is.EqualTo(next), "packets in order, none lost");
                if (++next == PacketCount)
                {
                    break;
                }
            }
        }

        await writer.WaitAsync(Patience);
        TestContext.Out.WriteLine($"{PacketCount} packets read; the shard paused {channel.ReceivePauses} times; {held} taken while nobody read");
        Assert.That(channel.ReceivePauses, Is.GreaterThan(1), "it paused again as the reader caught up and fell behind");
        Assert.That(engine.ReadCounters().PacketsReceived, Is.EqualTo(PacketCount));
    }
    [TestCase(true), TestCase(false), CancelAfter(120_000)]
    public async Task DisposingTheChannel_DuringTraffic_EndsEverything(bool async)
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var engine = new ClientEngine(20, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]], ShardCount = 2 });
        EngineChannel channel = engine.StartChannel(new EngineChannelOptions { ReceiveCapacityPerShard = 32 });
        var disconnects = new int[20];
        long packets = 0;
        var reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    switch (e.Kind)
                    {
                        case EngineEventKind.Connected:
                            _ = channel.TrySend(e.Connection, Hello);
                            break;
                        case EngineEventKind.Packet:
                            // Every echo goes out again twice, so traffic grows until the channel is disposed.
                            _ = channel.TrySend(e.Connection, Hello);
                            _ = channel.TrySend(e.Connection, Hello);
                            Interlocked.Increment(ref packets);
                            break;
                        case EngineEventKind.Disconnected:
                            disconnects[e.Connection.Index]++;
                            break;
                    }
                }
            }
        });

        Wait.Until(() => Interlocked.Read(ref packets) > 5_000, "traffic");
        var disposer = new Thread(() =>
        {
            if (async)
            {
                channel.DisposeAsync().AsTask().GetAwaiter().GetResult();
            }
            else
            {
                channel.Dispose();
            }
        });
        disposer.Start();
        Assert.That(disposer.Join(Patience), Is.True, "the channel's disposal returned");
        await reading.WaitAsync(Patience);
        channel.Dispose();
        await channel.DisposeAsync();

        TestContext.Out.WriteLine($"{packets} packets read; {channel.DiscardedAfterDispose} discarded after dispose");
        Assert.Multiple(() =>
        {
            Assert.That(engine.Stopped.IsCompleted, Is.True, "disposing the channel stops its engine");
            Assert.That(disconnects, Is.All.EqualTo(1), "each connection's end, once");
            Assert.That(channel.BuffersOut, Is.Zero, "every packet buffer went back to the pool");
            Assert.That(channel.TrySend(new Connection(0, 0, 0), Hello), Is.False);
        });
    }
    [Test, CancelAfter(60_000)]
    public async Task StopAsyncAndDisposeAsync_NeverHang_InAnyOrder()
    {
        // Never started.
        var idle = new ClientEngine(1, new EngineOptions { Endpoints = ["tcp://127.0.0.1:1"] });
        await idle.StopAsync().WaitAsync(Patience);
        await idle.DisposeAsync().AsTask().WaitAsync(Patience);
        await idle.DisposeAsync().AsTask().WaitAsync(Patience);
        idle.Dispose();
        Assert.That(idle.Stopped.IsCompleted, Is.True);

        using var server = new StreamEchoServer();
        var engine = new ClientEngine(10, new EngineOptions { Endpoints = [server.Endpoint], ShardCount = 2 });
        engine.Start(shard => new EchoPumpHandler(shard));
        await engine.ConnectsResolved.WaitAsync(Patience);

        // A cancelled wait throws, and the engine stops all the same.
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        Assert.ThrowsAsync<TaskCanceledException>(() => engine.StopAsync(cancelled.Token));
        await engine.Stopped.WaitAsync(Patience);
        await engine.StopAsync().WaitAsync(Patience);
        await engine.DisposeAsync().AsTask().WaitAsync(Patience);
        engine.Dispose();
        await engine.DisposeAsync().AsTask().WaitAsync(Patience);
        Assert.That(engine.IsRunning, Is.False);

        var other = new ClientEngine(2, new EngineOptions { Endpoints = [server.Endpoint] });
        other.Start(shard => new EchoPumpHandler(shard));
        other.Dispose();
        await other.DisposeAsync().AsTask().WaitAsync(Patience);
        await other.StopAsync().WaitAsync(Patience);
    }
    [Test, CancelAfter(60_000)]
    public async Task DisposeAsync_WaitsWithoutBlockingTheCaller()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        using var gate = new ManualResetEventSlim();
        var engine = new ClientEngine(1, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]] });
        var handler = new GatedHandler(gate);
        engine.Start(_ => handler);
        Wait.Until(() => handler.Held, "the shard held in a callback");

        ValueTask disposing = default;
        var caller = new Thread(() => disposing = engine.DisposeAsync());
        caller.Start();
        Assert.That(caller.Join(Patience), Is.True, "DisposeAsync returned to its caller while the shard was held");
        Assert.That(disposing.IsCompleted, Is.False, "it waits for the shard");
        gate.Set();
        await disposing.AsTask().WaitAsync(Patience);
        Assert.That(engine.Stopped.IsCompleted, Is.True);
    }

    private static int Count(List<EngineEvent> events, EngineEventKind kind)
    {
        lock (events)
        {
            return events.Count(e => e.Kind == kind);
        }
    }

    /// <summary>Sends its greeting from OnConnected and records what it gets.</summary>
    private sealed class SpeakFirstHandler(byte[] greeting) : IConnectionHandler
    {
        private readonly List<byte[]> _packets = new();
        private readonly List<SendResult> _results = new();

        public int PacketCount
        {
            get
            {
                lock (_packets)
                {
                    return _packets.Count;
                }
            }
        }

        public List<byte[]> Packets
        {
            get
            {
                lock (_packets)
                {
                    return _packets.ToList();
                }
            }
        }

        public List<SendResult> Results
        {
            get
            {
                lock (_packets)
                {
                    return _results.ToList();
                }
            }
        }

        public void OnConnected(EngineShard shard, Connection connection)
        {
            SendResult result = shard.Send(connection, greeting);
            lock (_packets)
            {
                _results.Add(result);
            }
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            lock (_packets)
            {
                _packets.Add(packet.ToArray());
            }
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }

    /// <summary>Holds its shard in OnPass, once connected, until the gate opens.</summary>
    private sealed class GatedHandler(ManualResetEventSlim gate) : IConnectionHandler
    {
        private volatile bool _held;
        private volatile bool _connected;

        public bool Held => _held;

        public void OnConnected(EngineShard shard, Connection connection) => _connected = true;

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
            if (_connected)
            {
                _held = true;
                gate.Wait();
            }
        }
    }
}
