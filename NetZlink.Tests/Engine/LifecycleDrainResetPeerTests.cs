// The drain against peers that reset their connection while it runs (docs/engine.md, "Draining",
// "What the counts mean"): a connection that ends other than by the drain's own clean close
// proves nothing about what arrived, so the frames of its current life counted Sent move to
// DroppedClosed and the drain returns false. Checked: a true drain means every accepted frame
// arrived; a false one that the peers received at least Sent and at most Sent + DroppedDrainDeadline
// + DroppedClosed frames; the counters balance; what each peer got is its connection's frames in order.
namespace NetZlink.Tests.Engine;

public sealed class LifecycleDrainResetPeerTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    [RequiresStreamClient]
    [Test, CancelAfter(300_000)]
    public async Task Drain_PeersThatResetMidDrain_TrueMeansAllArrived_FalseKeepsTheBounds_Randomized()
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(4);
        for (int round = 0; round < rounds; round++)
        {
            await Round(new Random(random.Next()), $"seed {seed}, round {round}");
        }
    }

    private static async Task Round(Random random, string what)
    {
        int connections = random.Next(1, 4);
        // A slow reader behind a small receive buffer keeps the engine's frames queued.
        using TcpListener listener = DrainPeers.SmallBufferListener(out int port);
        var drainBegun = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var peers = new List<Task<byte[]>>();
        int resets = 0;
        // One round in four no peer resets (the drain must then be true); else at least the first
        // peer resets, the others each at even odds.
        bool anyReset = random.Next(4) != 0;
        Task accepting = Task.Run(async () =>
        {
            for (int i = 0; i < connections; i++)
            {
                Socket socket = await listener.AcceptSocketAsync();
                int resetAfterMs = anyReset && (i == 0 || random.Next(2) == 0) ? random.Next(0, 150) : -1;
                if (resetAfterMs >= 0)
                {
                    resets++;
                }

                lock (peers)
                {
                    peers.Add(Peer(socket, random.Next(), drainBegun.Task, resetAfterMs));
                }
            }
        });

        await using var client = new ClientEngine(connections, new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{port}"],
            ShardCount = random.Next(1, 3),
            SendQueueCapacityPerConnection = 512 * 1024,
            // A small native queue: the engine still holds frames of its own while the peers reset.
            HighWaterMark = random.Next(4, 64),
        });
        EngineChannel channel = client.StartChannel();
        var ready = new ConcurrentBag<Connection>();
        Task reading = DrainPeers.CollectConnected(channel, ready);
        Wait.Until(() => ready.Count == connections, $"{what}: connected", Patience);
        await accepting.WaitAsync(Patience);
        Connection[] all = ready.OrderBy(c => c.Index).ToArray();

        // One poster per connection (its order known) posts until the drain refuses it, so the
        // drain begins with frames still queued.
        var accepted = new ConcurrentDictionary<int, List<byte[]>>();
        Task[] posters = all.Select(c => Task.Run(async () =>
        {
            var mine = new Random(random.Next());
            var list = accepted.GetOrAdd(c.Index, _ => new List<byte[]>());
            for (int sequence = 0; ; sequence++)
            {
                byte[] packet = DrainPeers.Body(c.Index, sequence, mine.Next(8, 8 * 1024));
                if (!await channel.SendAsync(c, packet))
                {
                    return;
                }

                list.Add(packet);
            }
        })).ToArray();

        Wait.Until(() => client.ReadSendQueueCounters().BytesHeld >= connections * 256 * 1024, $"{what}: frames queued", Patience);
        Task<bool> drain = channel.DrainAsync(TimeSpan.FromSeconds(30));
        drainBegun.TrySetResult();
        bool drained = await drain.WaitAsync(TimeSpan.FromSeconds(90));
        await Task.WhenAll(posters).WaitAsync(Patience);
        await reading.WaitAsync(Patience);
        Task<byte[]>[] peerTasks;
        lock (peers)
        {
            peerTasks = [.. peers];
        }

        byte[][] streams = await Task.WhenAll(peerTasks).WaitAsync(Patience);
        SendQueueCounters posts = client.ReadSendQueueCounters();
        long acceptedCount = accepted.Values.Sum(l => l.Count);

        // What each peer received: its connection's frames, a prefix of them in order.
        long delivered = 0;
        foreach (byte[] stream in streams)
        {
            if (stream.Length < 12)
            {
                continue;
            }

            int connection = BinaryPrimitives.ReadInt32BigEndian(stream.AsSpan(4));
            byte[] expected = accepted[connection].SelectMany(b => b).ToArray();
            int same = stream.AsSpan().CommonPrefixLength(expected);
            Assert.That(same, Is.EqualTo(stream.Length), $"{what}: connection {connection}'s peer got bytes that are not its frames in order (first difference at {same})");
            delivered += WholeFrames(stream);
        }

        TestContext.Out.WriteLine($"{what}: {connections} connections ({resets} reset), drain {drained}, delivered {delivered}, {posts}");
        Assert.Multiple(() =>
        {
            Assert.That(posts.Accepted, Is.EqualTo(acceptedCount), $"{what}: accepted");
            Assert.That(posts.Sent + posts.DroppedClosed + posts.DroppedStopped + posts.DroppedDrainDeadline, Is.EqualTo(posts.Accepted), $"{what}: counters balance");
            Assert.That(posts.BytesHeld, Is.Zero, $"{what}: nothing held");
            if (resets == 0)
            {
                Assert.That(drained, Is.True, $"{what}: no peer reset, a generous deadline: the drain is true");
            }

            if (drained)
            {
                Assert.That(delivered, Is.EqualTo(acceptedCount), $"{what}: a true drain means every accepted frame arrived");
                Assert.That(posts.Sent, Is.EqualTo(acceptedCount), $"{what}: a true drain counts every accepted frame Sent");
            }
            else
            {
                Assert.That(delivered, Is.GreaterThanOrEqualTo(posts.Sent), $"{what}: a false drain: at least Sent arrived");
                Assert.That(delivered, Is.LessThanOrEqualTo(posts.Sent + posts.DroppedDrainDeadline + posts.DroppedClosed), $"{what}: a false drain: at most Sent + DroppedDrainDeadline + DroppedClosed arrived");
            }
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public async Task Drain_APostRightAfterTheCallReturns_IsRefusedAndCounted()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        Task<Socket> accepting = listener.AcceptSocketAsync();
        await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [$"tcp://127.0.0.1:{port}"] });
        EngineChannel channel = client.StartChannel();
        var ready = new ConcurrentBag<Connection>();
        Task reading = DrainPeers.CollectConnected(channel, ready);
        Wait.Until(() => !ready.IsEmpty, "connected", Patience);
        using Socket peer = await accepting.WaitAsync(Patience);
        Task peerReading = Task.Run(async () =>
        {
            // Reads until the engine's end, then ends its side: the drain's close ends cleanly.
            byte[] buffer = new byte[4096];
            while (await peer.ReceiveAsync(buffer, SocketFlags.None) > 0)
            {
            }

            peer.Shutdown(SocketShutdown.Send);
        });
        Connection connection = ready.Single();
        Assert.That(client.TrySend(connection, DrainPeers.Body(connection.Index, 0, 16)), Is.True, "accepted before the drain");

        Task<bool> drain = client.DrainAsync(TimeSpan.FromSeconds(30));
        bool tried = client.TrySend(connection, DrainPeers.Body(connection.Index, 1, 16));
        bool awaited = await client.SendAsync(connection, DrainPeers.Body(connection.Index, 2, 16));
        await drain.WaitAsync(Patience);
        await reading.WaitAsync(Patience);
        await peerReading.WaitAsync(Patience);
        SendQueueCounters posts = client.ReadSendQueueCounters();
        Assert.Multiple(() =>
        {
            Assert.That(tried, Is.False, "TrySend right after DrainAsync returned its task");
            Assert.That(awaited, Is.False, "SendAsync right after DrainAsync returned its task");
            Assert.That(posts.Accepted, Is.EqualTo(1), "only the frame before the drain was accepted");
            Assert.That(posts.RefusedDraining, Is.EqualTo(2), "both refusals counted RefusedDraining");
        });
    }

    /// <summary>The whole length-prefixed frames at the start of a stream.</summary>
    private static long WholeFrames(byte[] stream)
    {
        long frames = 0;
        int at = 0;
        while (stream.Length - at >= 4)
        {
            int length = 4 + (int)BinaryPrimitives.ReadUInt32BigEndian(stream.AsSpan(at));
            if (stream.Length - at < length)
            {
                break;
            }

            at += length;
            frames++;
        }

        return frames;
    }

    /// <summary>
    /// A peer that writes to the engine all the time and reads slowly; with
    /// <paramref name="resetAfterMs"/> of 0 or more it resets the connection (RST) that long after
    /// the drain began, else it reads until the engine's end. Returns the bytes it read.
    /// </summary>
    private static async Task<byte[]> Peer(Socket socket, int seed, Task drainBegun, int resetAfterMs)
    {
        using (socket)
        {
            using var stop = new CancellationTokenSource();
            Task writing = DrainPeers.WriteUntil(socket, seed, stop.Token);

            using var reset = new CancellationTokenSource();
            Task resetting = resetAfterMs < 0 ? Task.CompletedTask : Task.Run(async () =>
            {
                await drainBegun;
                await Task.Delay(resetAfterMs);
                await reset.CancelAsync();
            });

            var received = new MemoryStream();
            byte[] buffer = new byte[4096];
            try
            {
                while (true)
                {
                    int n = await socket.ReceiveAsync(buffer, SocketFlags.None, reset.Token);
                    if (n == 0)
                    {
                        break;
                    }

                    received.Write(buffer, 0, n);
                    await Task.Delay(1, reset.Token);
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException)
            {
                // reset below, or the engine reset it
            }

            await stop.CancelAsync();
            await writing;
            await resetting;
            if (reset.IsCancellationRequested)
            {
                // LINGER 0: the close sends RST, throwing away what the kernel had not delivered.
                try
                {
                    socket.LingerState = new LingerOption(true, 0);
                }
                catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
                {
                    // already gone
                }
            }

            socket.Close();
            return received.ToArray();
        }
    }
}
