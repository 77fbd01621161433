// The drain against peers that keep writing to the engine while it closes (docs/engine.md,
// "Draining"): each connection's close flushes, half-closes and reads the peer's bytes until its
// end, so the kernel never resets a connection with our last frames still on their way. Every
// accepted frame must reach its peer byte for byte and be counted Sent, exactly, per connection.
namespace NetZlink.Tests.Engine;

public sealed class LifecycleDrainWritingPeerTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    [RequiresStreamClient]
    [Test, CancelAfter(300_000)]
    public async Task Drain_APeerThatKeepsWriting_GetsEveryFrame_AllCountedSent_Randomized()
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(2);
        for (int round = 0; round < rounds; round++)
        {
            await Round(new Random(random.Next()), $"seed {seed}, round {round}");
        }
    }

    private static async Task Round(Random random, string what)
    {
        int connections = random.Next(1, 5);
        // A slow reader behind a small receive buffer keeps the engine's frames queued.
        using TcpListener listener = DrainPeers.SmallBufferListener(out int port);
        var peers = new List<Task<byte[]>>();
        Task accepting = Task.Run(async () =>
        {
            for (int i = 0; i < connections; i++)
            {
                Socket socket = await listener.AcceptSocketAsync();
                lock (peers)
                {
                    peers.Add(Peer(socket, random.Next()));
                }
            }
        });

        await using var client = new ClientEngine(connections, new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{port}"],
            ShardCount = random.Next(1, 3),
        });
        EngineChannel channel = client.StartChannel();
        var ready = new ConcurrentBag<Connection>();
        long peerPackets = 0;
        Task reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    if (e.Kind == EngineEventKind.Connected)
                    {
                        ready.Add(e.Connection);
                    }
                    else if (e.Kind == EngineEventKind.Packet)
                    {
                        Interlocked.Increment(ref peerPackets);
                    }
                }
            }
        });
        Wait.Until(() => ready.Count == connections, $"{what}: connected", Patience);
        await accepting.WaitAsync(Patience);
        Connection[] all = ready.OrderBy(c => c.Index).ToArray();

        // One poster per connection keeps each connection's order known.
        var accepted = new ConcurrentDictionary<int, List<byte[]>>();
        await Task.WhenAll(all.Select(c => Task.Run(async () =>
        {
            var mine = new Random(random.Next());
            var list = accepted.GetOrAdd(c.Index, _ => new List<byte[]>());
            int frames = mine.Next(20, 400);
            for (int sequence = 0; sequence < frames; sequence++)
            {
                byte[] packet = DrainPeers.Body(c.Index, sequence, mine.Next(1, mine.Next(2) == 0 ? 64 : 32 * 1024));
                Assert.That(await channel.SendAsync(c, packet), Is.True, $"{what}: accepted before the drain");
                list.Add(packet);
            }
        }))).WaitAsync(Patience);

        bool drained = await channel.DrainAsync(TimeSpan.FromSeconds(60)).WaitAsync(TimeSpan.FromSeconds(90));
        await reading.WaitAsync(Patience);
        Task<byte[]>[] peerTasks;
        lock (peers)
        {
            peerTasks = [.. peers];
        }

        byte[][] streams = await Task.WhenAll(peerTasks).WaitAsync(Patience);
        SendQueueCounters posts = client.ReadSendQueueCounters();
        long acceptedCount = accepted.Values.Sum(l => l.Count);
        TestContext.Out.WriteLine($"{what}: {connections} connections, {acceptedCount} frames accepted, {Interlocked.Read(ref peerPackets)} packets from the peers meanwhile");
        Assert.Multiple(() =>
        {
            Assert.That(drained, Is.True, $"{what}: every close ended with all out before a generous deadline");
            Assert.That(posts.Accepted, Is.EqualTo(acceptedCount), $"{what}: accepted");
            Assert.That(posts.Sent, Is.EqualTo(acceptedCount), $"{what}: every accepted frame counted Sent");
            Assert.That(posts.DroppedStopped + posts.DroppedDrainDeadline + posts.DroppedClosed, Is.Zero, $"{what}: nothing dropped");
        });

        var byConnection = new Dictionary<int, byte[]>();
        foreach (byte[] stream in streams)
        {
            if (stream.Length >= 8)
            {
                byConnection[BinaryPrimitives.ReadInt32BigEndian(stream.AsSpan(4))] = stream;
            }
        }

        foreach (Connection c in all)
        {
            byte[] expected = accepted[c.Index].SelectMany(b => b).ToArray();
            byte[] received = byConnection.TryGetValue(c.Index, out byte[]? got) ? got : [];
            int same = received.AsSpan().CommonPrefixLength(expected);
            Assert.That(received.Length == expected.Length && same == expected.Length, Is.True,
                $"{what}: connection {c.Index} got {received.Length} of {expected.Length} bytes ({accepted[c.Index].Count} frames), first difference at {same}");
        }
    }

    /// <summary>
    /// A peer that writes packets to the engine all the time and reads what the engine sends
    /// slowly, until the engine's end; then it closes. Returns the bytes it read.
    /// </summary>
    private static async Task<byte[]> Peer(Socket socket, int seed)
    {
        using (socket)
        {
            using var stop = new CancellationTokenSource();
            Task writing = DrainPeers.WriteUntil(socket, seed, stop.Token);

            var received = new MemoryStream();
            byte[] buffer = new byte[4096];
            while (true)
            {
                int n = await socket.ReceiveAsync(buffer, SocketFlags.None);
                if (n == 0)
                {
                    break;
                }

                received.Write(buffer, 0, n);
                await Task.Delay(1);
            }

            await stop.CancelAsync();
            await writing;
            return received.ToArray();
        }
    }
}
