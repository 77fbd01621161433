// The connection lifecycle of the engines (docs/engine.md, "Reconnecting", "Dead peers",
// "Draining"): peers that vanish and come back (reconnect, the same Connection, exact streams per
// generation, frames of the old generation dropped and counted), a policy that gives up with its
// signal, jitter within its bounds for a seed, peers that stall (IdleTimeout, keepalive on the
// connection's TCP socket), the drain (every accepted frame arrives byte for byte or is counted,
// the deadline is honoured) and the live-connection count after a stop.
namespace NetZlink.Tests.Engine;

public sealed class LifecycleTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Test]
    public void ReconnectDelays_StayWithinTheBackoffCapAndJitter_AndRepeatForASeed()
    {
        Random random = Fuzz.Random(out _);
        for (int i = 0; i < 500; i++)
        {
            var policy = new ReconnectPolicy
            {
                InitialDelay = TimeSpan.FromMilliseconds(random.Next(0, 500)),
                Multiplier = 1 + (random.NextDouble() * 3),
                Jitter = random.NextDouble(),
            };
            policy.MaxDelay = policy.InitialDelay + TimeSpan.FromMilliseconds(random.Next(0, 60_000));
            int round = random.Next(1, 80);
            double sample = random.NextDouble();
            double backoff = Math.Min(policy.MaxDelay.TotalMilliseconds, policy.InitialDelay.TotalMilliseconds * Math.Pow(policy.Multiplier, round - 1));
            double delay = policy.Delay(round, sample).TotalMilliseconds;
            Assert.That(delay, Is.InRange((backoff * (1 - policy.Jitter)) - 0.01, backoff + 0.01), $"round {round} of {policy.InitialDelay}..{policy.MaxDelay} x{policy.Multiplier} jitter {policy.Jitter}");
        }

        // Jitter 0: exact; the cap holds from the round the backoff reaches it.
        var exact = new ReconnectPolicy { InitialDelay = TimeSpan.FromMilliseconds(100), MaxDelay = TimeSpan.FromSeconds(1), Multiplier = 2, Jitter = 0 };
        Assert.That(Enumerable.Range(1, 6).Select(r => exact.Delay(r, 0.7).TotalMilliseconds), Is.EqualTo(new double[] { 100, 200, 400, 800, 1000, 1000 }));
        Assert.That(new ReconnectPolicy { Jitter = 1 }.Delay(1, 1).TotalMilliseconds, Is.EqualTo(0), "full jitter reaches 0");
    }

    [Test]
    public void APolicyOutOfBounds_IsRefused_NamingTheSetting()
    {
        var options = new EngineOptions { Endpoints = ["tcp://127.0.0.1:1"], Reconnect = new ReconnectPolicy { Jitter = 1.5, Multiplier = 0.5 }, IdleTimeout = TimeSpan.FromSeconds(-1) };
        Assert.That(options.Validate(server: false).Select(p => p.Option), Is.EquivalentTo(new[] { "IdleTimeout", "Reconnect:Jitter", "Reconnect:Multiplier" }));
        var refused = Assert.Throws<ArgumentOutOfRangeException>(() => new ClientEngine(1, options))!;
        Assert.That(refused.Message, Does.Contain("EngineOptions.IdleTimeout must not be negative"));
        Assert.That(new EngineOptions { Endpoints = ["tcp://127.0.0.1:1"] }.Validate(server: false), Is.Empty);
    }

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public async Task APeerThatVanishesAndComesBack_IsReconnected_WithExactStreamsPerGeneration()
    {
        const int Connections = 3;
        await using var first = new ChannelEchoServer(endpoints: 1);
        string endpoint = first.Engine.BoundEndpoints[0];
        await using var client = new ClientEngine(Connections, new EngineOptions
        {
            Endpoints = [endpoint],
            ShardCount = 2,
            ConnectRetries = 0,
            ConnectTimeout = TimeSpan.FromSeconds(2),
            Reconnect = new ReconnectPolicy { InitialDelay = TimeSpan.FromMilliseconds(20), MaxDelay = TimeSpan.FromMilliseconds(200), Seed = 7 },
        });
        EngineChannel channel = client.StartChannel();
        var events = new ConcurrentQueue<(int Connection, EngineEventKind Kind, ConnectionEndReason? Reason, ConnectFailure? Failure, int Attempt)>();
        var generations = new ConcurrentDictionary<int, int>();
        var stalePosts = 0;
        Task reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    events.Enqueue((e.Connection.Index, e.Kind, e.Reason, e.Failure, e.Attempt));
                    if (e.Kind == EngineEventKind.Connected)
                    {
                        int generation = generations.AddOrUpdate(e.Connection.Index, 1, (_, g) => g + 1);
                        Assert.That(await channel.SendAsync(e.Connection, Packet(e.Connection.Index, generation)), Is.True);
                    }
                    else if (e.Kind == EngineEventKind.Disconnected && channel.TrySend(e.Connection, Packet(e.Connection.Index, 99)))
                    {
                        // Posted after the generation ended: never sent to the next one.
                        Interlocked.Increment(ref stalePosts);
                    }
                }
            }
        });

        Wait.Until(() => events.Count(e => e.Kind == EngineEventKind.Packet) == Connections, "the first generation's echoes", Patience);
        var port = new Uri(endpoint.Replace("tcp://", "http://", StringComparison.Ordinal)).Port;
        await first.Engine.StopAsync().WaitAsync(Patience);
        Wait.Until(() => events.Count(e => e.Kind == EngineEventKind.Reconnecting) >= Connections, "every connection reconnecting", Patience);

        await using var second = new ChannelEchoServer(new ServerEngine(new EngineOptions { Endpoints = [$"tcp://127.0.0.1:{port}"] }));
        Wait.Until(() => second.Packets == Connections, "the second generation's packets at the second server", Patience);
        Wait.Until(() => events.Count(e => e.Kind == EngineEventKind.Packet) == 2 * Connections, "both generations' echoes", Patience);
        await client.StopAsync().WaitAsync(Patience);
        await reading.WaitAsync(Patience);

        EngineCounters counters = client.ReadCounters();
        SendQueueCounters posts = client.ReadSendQueueCounters();
        Assert.Multiple(() =>
        {
            // Each server connection's stream is exactly one packet: generation 1 at the first
            // server, generation 2 at the second (nothing of generation 1, no stale post).
            Assert.That(first.Received.Values.Select(s => s.ToArray()), Is.EquivalentTo(Enumerable.Range(0, Connections).Select(c => Packet(c, 1))));
            Assert.That(second.Received.Values.Select(s => s.ToArray()), Is.EquivalentTo(Enumerable.Range(0, Connections).Select(c => Packet(c, 2))));
            for (int c = 0; c < Connections; c++)
            {
                var kinds = events.Where(e => e.Connection == c).Select(e => e.Kind).Where(k => k != EngineEventKind.Reconnecting).ToArray();
                Assert.That(kinds, Is.EqualTo(new[]
                {
                    EngineEventKind.Connected, EngineEventKind.Packet, EngineEventKind.Disconnected,
                    EngineEventKind.Connected, EngineEventKind.Packet, EngineEventKind.Disconnected,
                }), $"connection {c}: one Disconnected per generation");
                var mine = events.Where(e => e.Connection == c).ToArray();
                Assert.That(mine.Where(e => e.Kind == EngineEventKind.Disconnected).Select(e => e.Reason), Is.EqualTo(new ConnectionEndReason?[] { ConnectionEndReason.Remote, ConnectionEndReason.EngineStopped }));
                Assert.That(mine.Where(e => e.Kind == EngineEventKind.Reconnecting).Select(e => e.Attempt), Is.EqualTo(Enumerable.Range(1, mine.Count(e => e.Kind == EngineEventKind.Reconnecting))), "rounds counted from 1");
                Assert.That(mine.Where(e => e.Kind != EngineEventKind.Disconnected).Select(e => e.Reason), Is.All.Null, "Reason only on Disconnected");
                Assert.That(mine.Select(e => e.Failure), Is.All.Null, "no Failure without ConnectFailed");
            }

            Assert.That(counters.Connected, Is.EqualTo(2 * Connections));
            Assert.That(counters.Connected - counters.Disconnects, Is.Zero, "no live connection after the stop");
            Assert.That(counters.Reconnects, Is.GreaterThanOrEqualTo(Connections));
            Assert.That(posts.Accepted, Is.EqualTo(posts.Sent + posts.DroppedClosed + posts.DroppedStopped + posts.DroppedDrainDeadline));
            Assert.That(posts.DroppedClosed, Is.GreaterThanOrEqualTo(Volatile.Read(ref stalePosts)), "the stale posts were dropped, counted");
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public async Task APolicyThatRunsOut_GivesUp_WithConnectFailedAndAReason()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var client = new ClientEngine(2, new EngineOptions
        {
            Endpoints = [server.Engine.BoundEndpoints[0]],
            ShardCount = 1,
            ConnectRetries = 1,
            ConnectRetryDelay = TimeSpan.FromMilliseconds(5),
            Reconnect = new ReconnectPolicy { InitialDelay = TimeSpan.FromMilliseconds(5), MaxDelay = TimeSpan.FromMilliseconds(50), MaxAttempts = 3, Seed = 1 },
        });
        EngineChannel channel = client.StartChannel();
        var events = new ConcurrentQueue<EngineEvent>();
        Task reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    events.Enqueue(e);
                }
            }
        });

        await client.ConnectsResolved.WaitAsync(Patience);
        await server.Engine.StopAsync().WaitAsync(Patience);
        Wait.Until(() => events.Count(e => e.Kind == EngineEventKind.ConnectFailed) == 2, "both connections given up", Patience);
        EngineCounters counters = client.ReadCounters();
        await client.StopAsync().WaitAsync(Patience);
        await reading.WaitAsync(Patience);

        Assert.Multiple(() =>
        {
            foreach (var group in events.GroupBy(e => e.Connection))
            {
                EngineEvent[] mine = group.ToArray();
                Assert.That(mine.Select(e => e.Kind), Is.EqualTo(new[]
                {
                    EngineEventKind.Connected, EngineEventKind.Disconnected, EngineEventKind.Reconnecting,
                    EngineEventKind.Reconnecting, EngineEventKind.Reconnecting, EngineEventKind.ConnectFailed,
                }), $"{group.Key}: three rounds, then the give-up");
                ConnectFailure failure = mine[^1].Failure!.Value;
                Assert.That(failure.Reconnects, Is.EqualTo(3));
                Assert.That(failure.Attempts, Is.EqualTo(2), "each round is the ordinary connect: 1 + ConnectRetries attempts");
                Assert.That(failure.ToString(), Does.StartWith("reconnect gave up after 3 rounds, the last: connect failed: ECONNREFUSED"));
                Assert.That(mine.Where(e => e.Kind == EngineEventKind.Reconnecting).Select(e => e.Delay), Is.All.InRange(TimeSpan.Zero, TimeSpan.FromMilliseconds(50)), "within the cap");
            }

            Assert.That(counters.ReconnectsGaveUp, Is.EqualTo(2));
            Assert.That(counters.Reconnects, Is.EqualTo(6));
            Assert.That(counters.ConnectFailed, Is.EqualTo(2), "a give-up is a connection that failed to connect");
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public async Task APeerThatStalls_IsClosedByTheIdleTimeout_OnBothEngines_WithKeepaliveOnItsSocket()
    {
        // A peer that accepts and then never says a word.
        using TcpListener silent = Listening(out int port);
        var handler = new RecordingHandler();
        using var client = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{port}"],
            IdleTimeout = TimeSpan.FromMilliseconds(300),
            TcpKeepalive = true,
            TcpKeepaliveIdle = 7,
            TcpKeepaliveInterval = 3,
            TcpKeepaliveCount = 2,
        });
        client.Start(_ => handler);
        using TcpClient accepted = await silent.AcceptTcpClientAsync().WaitAsync(Patience);
        Wait.Until(() => handler.Connected.Count == 1, "connected");
        string? keepalive = KeepaliveTimerOf(port);
        TestContext.Out.WriteLine($"ss -o of the client's connection: {keepalive ?? "(ss not available, or the connection was gone)"}");
        Wait.Until(() => handler.Disconnects.Count == 1, "the idle timeout", Patience);
        Assert.Multiple(() =>
        {
            Assert.That(handler.Disconnects[0].Reason, Is.EqualTo(ConnectionEndReason.IdleTimeout));
            Assert.That(client.ReadCounters().IdleTimeouts, Is.EqualTo(1));
            if (keepalive is not null)
            {
                // ss -o shows the kernel's keepalive timer on a socket with SO_KEEPALIVE (TCP_KEEPIDLE 7 s).
                Assert.That(keepalive, Does.Contain("keepalive"), "SO_KEEPALIVE on the connection's TCP socket");
            }
        });

        // The server side: a client that connects and sends nothing is closed too.
        var serverHandler = new RecordingHandler();
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], IdleTimeout = TimeSpan.FromMilliseconds(300) });
        server.Start(_ => serverHandler);
        int serverPort = new Uri(server.BoundEndpoints[0].Replace("tcp://", "http://", StringComparison.Ordinal)).Port;
        using var quiet = new TcpClient();
        await quiet.ConnectAsync(IPAddress.Loopback, serverPort);
        Wait.Until(() => serverHandler.Disconnects.Count == 1, "the server's idle timeout", Patience);
        Assert.That(serverHandler.Disconnects[0].Reason, Is.EqualTo(ConnectionEndReason.IdleTimeout));
        int read = await quiet.GetStream().ReadAsync(new byte[16]).AsTask().WaitAsync(Patience);
        Assert.That(read, Is.Zero, "the peer sees the connection closed");
    }

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public async Task AStalledPeer_ClosedByTheIdleTimeout_IsReconnected()
    {
        using TcpListener silent = Listening(out int port);
        using var client = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{port}"],
            IdleTimeout = TimeSpan.FromMilliseconds(300),
            Reconnect = new ReconnectPolicy { InitialDelay = TimeSpan.FromMilliseconds(10), Seed = 3 },
        });
        var handler = new RecordingHandler();
        client.Start(_ => handler);
        using TcpClient first = await silent.AcceptTcpClientAsync().WaitAsync(Patience);
        using TcpClient second = await silent.AcceptTcpClientAsync().WaitAsync(Patience);
        Wait.Until(() => handler.Connected.Count == 2, "the second generation", Patience);
        Assert.Multiple(() =>
        {
            Assert.That(handler.Disconnects[0].Reason, Is.EqualTo(ConnectionEndReason.IdleTimeout));
            Assert.That(handler.Connected.Distinct().Count(), Is.EqualTo(1), "the same Connection across the reconnect");
            Assert.That(client.ReadCounters().Reconnects, Is.GreaterThanOrEqualTo(1));
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(300_000)]
    public async Task Drain_SendsEveryAcceptedFrameOrCountsIt_Randomized()
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(2);
        for (int round = 0; round < rounds; round++)
        {
            await DrainRound(new Random(random.Next()), $"seed {seed}, round {round}");
        }
    }

    private static async Task DrainRound(Random random, string what)
    {
        int connections = random.Next(1, 5);
        int posters = random.Next(1, 4);
        // A peer that only reads by default; NETZLINK_DRAIN_ECHO=1 makes it echo, so it writes to
        // the engine while the drain closes (the half-close keeps that exact: docs/engine.md,
        // "Draining"; LifecycleDrainWritingPeerTests checks it on every run).
        await using var server = new ChannelEchoServer(endpoints: 1, echo: Environment.GetEnvironmentVariable("NETZLINK_DRAIN_ECHO") == "1");
        await using var client = new ClientEngine(connections, new EngineOptions
        {
            Endpoints = [server.Engine.BoundEndpoints[0]],
            ShardCount = random.Next(1, 3),
            SendQueueCapacityPerConnection = random.Next(1, 3) == 1 ? 64 * 1024 : 4 * 1024 * 1024,
        });
        EngineChannel channel = client.StartChannel();
        var ready = new ConcurrentBag<Connection>();
        var disconnected = 0;
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
                    else if (e.Kind == EngineEventKind.Disconnected)
                    {
                        Interlocked.Increment(ref disconnected);
                    }
                }
            }
        });
        Wait.Until(() => ready.Count == connections, $"{what}: connected", Patience);
        Connection[] all = ready.OrderBy(c => c.Index).ToArray();

        // Each connection's accepted packets, in order (one poster per connection keeps the order known).
        var accepted = new ConcurrentDictionary<int, List<byte[]>>();
        long refusedAfterDrain = 0;
        using var drainStarted = new ManualResetEventSlim();
        int drainAfter = random.Next(0, 200);
        Task[] posting = Enumerable.Range(0, posters).Select(p => Task.Run(async () =>
        {
            var mine = new Random(random.Next());
            int sequence = 0;
            int afterDrain = 0;
            Connection[] targets = all.Where(c => c.Index % posters == p).ToArray();
            while (targets.Length > 0 && afterDrain < 20)
            {
                Connection target = targets[mine.Next(targets.Length)];
                byte[] packet = Body(target.Index, sequence++, mine.Next(1, mine.Next(2) == 0 ? 64 : 64 * 1024));
                bool after = drainStarted.IsSet;
                if (await channel.SendAsync(target, packet))
                {
                    accepted.GetOrAdd(target.Index, _ => new List<byte[]>()).Add(packet);
                }
                else if (after)
                {
                    Interlocked.Increment(ref refusedAfterDrain);
                }

                if (after)
                {
                    afterDrain++;
                }
            }
        })).ToArray();

        Wait.Until(() => accepted.Values.Sum(l => l.Count) >= drainAfter, $"{what}: posts before the drain", Patience);
        drainStarted.Set();
        bool drained = await channel.DrainAsync(TimeSpan.FromSeconds(60)).WaitAsync(TimeSpan.FromSeconds(90));
        await Task.WhenAll(posting).WaitAsync(Patience);
        await reading.WaitAsync(Patience);

        SendQueueCounters posts = client.ReadSendQueueCounters();
        long acceptedCount = accepted.Values.Sum(l => l.Count);
        Assert.Multiple(() =>
        {
            Assert.That(drained, Is.True, $"{what}: everything flushed before a generous deadline");
            Assert.That(posts.Accepted, Is.EqualTo(acceptedCount), $"{what}: accepted");
            Assert.That(posts.Accepted, Is.EqualTo(posts.Sent + posts.DroppedClosed + posts.DroppedStopped + posts.DroppedDrainDeadline), $"{what}: every accepted frame ended once");
            Assert.That(posts.DroppedStopped + posts.DroppedDrainDeadline + posts.DroppedClosed, Is.Zero, $"{what}: nothing dropped");
            Assert.That(posts.RefusedDraining, Is.GreaterThanOrEqualTo(Interlocked.Read(ref refusedAfterDrain)), $"{what}: refusals counted");
            Assert.That(posts.BytesHeld, Is.Zero);
            Assert.That(Volatile.Read(ref disconnected), Is.EqualTo(connections), $"{what}: one Disconnected per connection, then the reader completed");
        });

        // The server numbers its connections itself: each stream names its client connection in
        // its first packet.
        // Counted after each packet is written down (a stream's Length grows before its bytes are copied).
        Wait.Until(() => Interlocked.Read(ref server.Packets) >= acceptedCount, $"{what}: every accepted frame at the server", Patience);
        var byClient = new Dictionary<int, byte[]>();
        foreach (MemoryStream stream in server.Received.Values)
        {
            byte[] bytes = stream.ToArray();
            if (bytes.Length >= 8)
            {
                byClient[BinaryPrimitives.ReadInt32BigEndian(bytes.AsSpan(4))] = bytes;
            }
        }

        foreach (Connection c in all)
        {
            byte[] expected = accepted.TryGetValue(c.Index, out List<byte[]>? list) ? list.SelectMany(b => b).ToArray() : [];
            byte[] received = byClient.TryGetValue(c.Index, out byte[]? got) ? got : [];
            int differs = received.AsSpan().CommonPrefixLength(expected);
            Assert.That(received, Is.EqualTo(expected), $"{what}: connection {c.Index} byte for byte ({received.Length} received, {expected.Length} accepted in {list?.Count ?? 0} frames, first difference at {differs})");
        }
    }

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public async Task Drain_HonoursItsDeadline_WhenThePeerDoesNotRead_AndCountsWhatItDropped()
    {
        using TcpListener deaf = Listening(out int port);
        var connected = new TaskCompletionSource<Connection>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var client = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{port}"],
            SendBufferSize = 16 * 1024,
            HighWaterMark = 4,
            SendQueueCapacityPerConnection = 256 * 1024,
        });
        EngineChannel channel = client.StartChannel();
        Task reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    if (e.Kind == EngineEventKind.Connected)
                    {
                        connected.TrySetResult(e.Connection);
                    }
                }
            }
        });
        using TcpClient peer = await deaf.AcceptTcpClientAsync().WaitAsync(Patience);
        Connection connection = await connected.Task.WaitAsync(Patience);
        byte[] packet = Body(0, 0, 32 * 1024);
        long accepted = 0;
        for (int misses = 0; misses < 200;)
        {
            if (channel.TrySend(connection, packet))
            {
                accepted++;
                misses = 0;
            }
            else
            {
                misses++;
                await Task.Delay(5);
            }
        }

        Task<bool> drain = channel.DrainAsync(TimeSpan.FromMilliseconds(500));
        Assert.That(await drain.WaitAsync(Patience), Is.False, "the deadline came first");
        Assert.That(channel.TrySend(connection, packet), Is.False, "no intake after the drain began");
        await client.Stopped.WaitAsync(Patience);
        await reading.WaitAsync(Patience);
        SendQueueCounters posts = client.ReadSendQueueCounters();
        Assert.Multiple(() =>
        {
            Assert.That(posts.Accepted, Is.EqualTo(accepted));
            Assert.That(posts.DroppedDrainDeadline, Is.GreaterThan(0), "what the deaf peer could not take is counted");
            Assert.That(posts.Accepted, Is.EqualTo(posts.Sent + posts.DroppedClosed + posts.DroppedStopped + posts.DroppedDrainDeadline));
            Assert.That(posts.RefusedDraining, Is.GreaterThanOrEqualTo(1));
            Assert.That(posts.BytesHeld, Is.Zero);
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public async Task AfterStopAsync_NoConnectionCountsAsLive()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var client = new ClientEngine(4, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]], ShardCount = 2 });
        client.Start(_ => new RecordingHandler());
        await client.ConnectsResolved.WaitAsync(Patience);
        Assert.That(client.ReadCounters().Connected, Is.EqualTo(4));
        await client.StopAsync().WaitAsync(Patience);
        EngineCounters counters = client.ReadCounters();
        Assert.That(counters.Connected - counters.Disconnects, Is.Zero, "the stop ended all four: the live count (and the netzlink.engine.connections metric) is 0");
        Assert.That(counters.Disconnects, Is.EqualTo(4));
    }

    /// <summary>A loopback listener that accepts (when asked) and never reads or writes.</summary>
    private static TcpListener Listening(out int port)
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        port = ((IPEndPoint)listener.LocalEndpoint).Port;
        return listener;
    }

    /// <summary>The kernel's timer column (ss -o) of the loopback connection to <paramref name="port"/>; null when ss is not there.</summary>
    private static string? KeepaliveTimerOf(int port)
    {
        try
        {
            using var ss = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("ss", $"-tnoH state established ( dport = :{port} )")
            {
                RedirectStandardOutput = true,
                UseShellExecute = false,
            })!;
            string output = ss.StandardOutput.ReadToEnd();
            ss.WaitForExit();
            return ss.ExitCode == 0 && output.Length > 0 ? output : null;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return null;
        }
    }

    /// <summary>A packet naming a connection and its generation.</summary>
    private static byte[] Packet(int connection, int generation) => Body(connection, generation, 8);

    /// <summary>A whole packet of <paramref name="length"/> body bytes, starting with the connection and a sequence number.</summary>
    private static byte[] Body(int connection, int sequence, int length) => DrainPeers.Body(connection, sequence, length);
}
