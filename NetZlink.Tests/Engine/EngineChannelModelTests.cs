// The channel API end to end, randomized: a ClientEngine and a ServerEngine both driven through
// EngineChannel (the server echoes every packet with WriteAsync), N connections, random packet
// sizes, writes from several threads. Phase one checks every byte stream exactly at both ends;
// phase two stops one engine mid-traffic and checks that both readers complete, that each
// connection hears exactly one Connected and one Disconnected, that every stream is an exact
// prefix of what was written, and that every packet is accounted for: each write accepted is sent
// or dropped with a reason, and each packet an engine received reached its reader.
// The seed is printed; NETZLINK_FUZZ_SEED=<seed> replays it, NETZLINK_FUZZ_ITERATIONS runs more rounds.
namespace NetZlink.Tests.Engine;

[RequiresStreamClient]
public sealed class EngineChannelModelTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);
    [TestCase(false), TestCase(true), CancelAfter(240_000)]
    public async Task BothEnginesThroughChannels_KeepEveryStreamExact_AndEndEachConnectionOnce(bool stopServerFirst)
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(1);
        for (int round = 0; round < rounds; round++)
        {
            await Round(new Random(random.Next()), seed, round, stopServerFirst);
        }
    }

    private static async Task Round(Random random, int seed, int round, bool stopServerFirst)
    {
        int connections = random.Next(4, 33);
        const int Senders = 3;
        int capacity = random.Next(8, 600);
        TestContext.Out.WriteLine($"round {round} (seed {seed}): {connections} connections, receive capacity {capacity}, stop {(stopServerFirst ? "server" : "client")} first");

        await using var server = new ChannelEchoServer(endpoints: 2, new EngineChannelOptions { ReceiveCapacityPerShard = capacity });
        await using var client = new ClientEngine(connections, new EngineOptions { Endpoints = server.Engine.BoundEndpoints.ToArray(), ShardCount = 2 });
        EngineChannel channel = client.StartChannel(new EngineChannelOptions { ReceiveCapacityPerShard = capacity });
        var model = new ClientModel(connections);
        Task reader = Task.Run(() => model.ReadAll(channel));

        await client.ConnectsResolved.WaitAsync(Patience);
        await Until(() => model.ConnectedCount == connections, "every Connected event");

        // Phase one: bounded traffic, every echo back, streams exact at both ends.
        int[] seeds = Enumerable.Range(0, Senders).Select(_ => random.Next()).ToArray();
        using var stop = new CancellationTokenSource();
        await Task.WhenAll(Enumerable.Range(0, Senders).Select(t => Task.Run(() => Send(channel, model, t, Senders, new Random(seeds[t]), packets: 40, stop.Token))));
        await Until(() => model.AllEchoed(), "every echo");
        var serverOf = new int[connections];
        for (int i = 0; i < connections; i++)
        {
            byte[] sent = model.Sent(i);
            Assert.That(model.Received(i), Is.EqualTo(sent), $"connection {i}: the echoed stream");
            KeyValuePair<int, MemoryStream> match = server.Received.Single(kv => kv.Value.ToArray().AsSpan().SequenceEqual(sent));
            serverOf[i] = match.Key;
        }

        // Phase two: traffic until one engine stops under it.
        seeds = Enumerable.Range(0, Senders).Select(_ => random.Next()).ToArray();
        Task[] senders = Enumerable.Range(0, Senders).Select(t => Task.Run(() => Send(channel, model, t, Senders, new Random(seeds[t]), packets: int.MaxValue, stop.Token))).ToArray();
        await Task.Delay(random.Next(20, 300));
        if (stopServerFirst)
        {
            await server.Engine.StopAsync().WaitAsync(Patience);
            await server.Finished.WaitAsync(Patience);
        }

        await client.StopAsync().WaitAsync(Patience);
        await reader.WaitAsync(Patience);
        await stop.CancelAsync();
        await Task.WhenAll(senders).WaitAsync(Patience);
        await server.Engine.StopAsync().WaitAsync(Patience);
        await server.Finished.WaitAsync(Patience);

        SendQueueCounters posts = client.ReadSendQueueCounters();
        EngineCounters counters = client.ReadCounters();
        TestContext.Out.WriteLine($"client: {model.Accepted} writes accepted, {model.Refused} refused, {posts}; {model.PacketEvents} packets read of {counters.PacketsReceived}; pauses {channel.ReceivePauses}; server pauses {server.Channel.ReceivePauses}");
        Assert.Multiple(() =>
        {
            Assert.That(posts.Accepted, Is.EqualTo(model.Accepted), "every accepted write is an accepted post");
            Assert.That(posts.Accepted, Is.EqualTo(posts.Sent + posts.DroppedClosed + posts.DroppedStopped), "every accepted write was sent or dropped with a reason");
            Assert.That(posts.BytesHeld, Is.Zero);
            Assert.That(model.PacketEvents, Is.EqualTo(counters.PacketsReceived), "every packet the client engine received reached the reader");
            Assert.That(Interlocked.Read(ref server.Packets), Is.EqualTo(server.Engine.ReadCounters().PacketsReceived), "every packet the server engine received reached its reader");
            Assert.That(channel.BuffersOut, Is.Zero, "every packet buffer went back to the pool");
            for (int i = 0; i < connections; i++)
            {
                byte[] sent = model.Sent(i);
                byte[] atServer = server.Received[serverOf[i]].ToArray();
                byte[] echoed = model.Received(i);
                Assert.That(model.Connects(i), Is.EqualTo(1), $"connection {i}: Connected events");
                Assert.That(model.Disconnects(i), Is.EqualTo(1), $"connection {i}: Disconnected events");
                Assert.That(model.FailedEvents, Is.Zero);
                Assert.That(sent.AsSpan().StartsWith(atServer), Is.True, $"connection {i}: the server's stream ({atServer.Length} bytes) is a prefix of the written one ({sent.Length})");
                Assert.That(atServer.AsSpan().StartsWith(echoed), Is.True, $"connection {i}: the echoed stream ({echoed.Length} bytes) is a prefix of the server's ({atServer.Length})");
                Assert.That(server.Connects[serverOf[i]], Is.EqualTo(1));
                Assert.That(server.Disconnects[serverOf[i]], Is.EqualTo(1), $"connection {i}: the server's Disconnected events");
            }

            Assert.That(server.Connects.Count, Is.EqualTo(connections));
            Assert.That(model.Reasons, Is.SubsetOf(stopServerFirst
                ? new[] { ConnectionEndReason.Remote, ConnectionEndReason.EngineStopped }
                : new[] { ConnectionEndReason.EngineStopped }));
        });
    }

    /// <summary>Writes packets to the connections this sender owns (i % senders == t), each [u32 length][index][sequence][random].</summary>
    private static async Task Send(EngineChannel channel, ClientModel model, int t, int senders, Random random, int packets, CancellationToken stop)
    {
        var owned = Enumerable.Range(0, model.Count).Where(i => i % senders == t).ToArray();
        var left = owned.ToDictionary(i => i, _ => packets);
        while (left.Count > 0 && !stop.IsCancellationRequested)
        {
            int i = owned[random.Next(owned.Length)];
            if (!left.ContainsKey(i))
            {
                continue;
            }

            int body = random.Next(10) == 0 ? random.Next(8, 60_000) : random.Next(8, 2_000);
            byte[] packet = new byte[4 + body];
            BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)body);
            BinaryPrimitives.WriteInt32BigEndian(packet.AsSpan(4), i);
            BinaryPrimitives.WriteInt32BigEndian(packet.AsSpan(8), model.SentPackets(i));
            random.NextBytes(packet.AsSpan(12));
            bool accepted = random.Next(2) == 0
                ? await channel.SendAsync(model.ConnectionOf(i), packet, CancellationToken.None)
                : TryWriteSoon(channel, model.ConnectionOf(i), packet, stop);
            if (!accepted)
            {
                model.Refuse();
                if (packets != int.MaxValue)
                {
                    Assert.Fail($"a write to connection {i} was refused while both engines ran");
                }

                return;
            }

            model.Wrote(i, packet);
            if (--left[i] == 0)
            {
                left.Remove(i);
            }
        }
    }

    private static bool TryWriteSoon(EngineChannel channel, Connection connection, byte[] packet, CancellationToken stop)
    {
        while (!channel.TrySend(connection, packet))
        {
            if (!channel.Engine.IsRunning || stop.IsCancellationRequested)
            {
                return false;
            }

            Thread.Sleep(1);
        }

        return true;
    }

    private static async Task Until(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!condition())
        {
            Assert.That(DateTime.UtcNow, Is.LessThan(deadline), $"timed out waiting for {what}");
            await Task.Delay(5);
        }
    }

    /// <summary>What the client application wrote and read, per connection index.</summary>
    private sealed class ClientModel(int count)
    {
        private readonly MemoryStream[] _sent = Enumerable.Range(0, count).Select(_ => new MemoryStream()).ToArray();
        private readonly int[] _sentPackets = new int[count];
        private readonly MemoryStream[] _received = Enumerable.Range(0, count).Select(_ => new MemoryStream()).ToArray();
        private readonly int[] _connects = new int[count];
        private readonly int[] _disconnects = new int[count];
        private readonly Connection[] _connections = new Connection[count];
        private readonly ConcurrentBag<ConnectionEndReason> _reasons = new();
        private long _accepted;
        private long _refused;
        private long _packetEvents;
        private int _connected;
        private int _failed;

        public int Count => count;

        public int ConnectedCount => Volatile.Read(ref _connected);

        public long Accepted => Interlocked.Read(ref _accepted);

        public long Refused => Interlocked.Read(ref _refused);

        public long PacketEvents => Interlocked.Read(ref _packetEvents);

        public int FailedEvents => Volatile.Read(ref _failed);

        public IEnumerable<ConnectionEndReason> Reasons => _reasons.Distinct();

        public Connection ConnectionOf(int i) => _connections[i];

        public int SentPackets(int i) => _sentPackets[i];

        public int Connects(int i) => _connects[i];

        public int Disconnects(int i) => _disconnects[i];

        public byte[] Sent(int i)
        {
            lock (_sent[i])
            {
                return _sent[i].ToArray();
            }
        }

        public byte[] Received(int i)
        {
            lock (_received[i])
            {
                return _received[i].ToArray();
            }
        }

        public bool AllEchoed() => Enumerable.Range(0, count).All(i => Received(i).Length == Sent(i).Length);

        public void Wrote(int i, byte[] packet)
        {
            lock (_sent[i])
            {
                _sent[i].Write(packet);
            }

            _sentPackets[i]++;
            Interlocked.Increment(ref _accepted);
        }

        public void Refuse() => Interlocked.Increment(ref _refused);

        public async Task ReadAll(EngineChannel channel)
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    int i = e.Connection.Index;
                    switch (e.Kind)
                    {
                        case EngineEventKind.Connected:
                            _connections[i] = e.Connection;
                            _connects[i]++;
                            Interlocked.Increment(ref _connected);
                            break;
                        case EngineEventKind.Packet:
                            Interlocked.Increment(ref _packetEvents);
                            Assert.That(BinaryPrimitives.ReadInt32BigEndian(e.Packet[4..]), Is.EqualTo(i), "a packet of another connection");
                            lock (_received[i])
                            {
                                _received[i].Write(e.Packet);
                            }

                            break;
                        case EngineEventKind.Disconnected:
                            _disconnects[i]++;
                            _reasons.Add(e.Reason!.Value);
                            break;
                        case EngineEventKind.ConnectFailed:
                            Interlocked.Increment(ref _failed);
                            break;
                    }
                }
            }
        }
    }
}
