// The engine's model-based randomized test: many connections over several shards, against a
// server whose every connection reads at a random pace (pauses, slow reads, resets), random
// packet sizes, sends from the handler and posts from several threads (TrySend and SendAsync with
// random cancellation), random local closes and, in some rounds, a handler that throws.
//
// What must hold, checked against a model of what each connection sent:
// - every connection's byte stream at the server is exactly the packets that connection sent, in
//   order: never a stray byte, never another connection's packet (ModelServer checks as it reads);
// - every echo comes back to its own connection, in order, byte for byte;
// - every packet is accounted for: a connection still open after the drain got every packet it
//   sent echoed; every posted frame the engine accepted was sent or counted as dropped
//   (SendQueueCounters), and the posters' own count of accepted frames is the engine's;
// - every connection that connected hears OnDisconnected exactly once (a throwing handler stops
//   the engine, and the reason is then EngineFault).
// The same model runs over tcp, tls, ws and wss (ModelServer speaks each), each with the default
// framer (the native BATCH framing cuts the packets) and with a custom framer of the same format
// (RAW framing, cut by the engine's PacketReassembler), and over tcp also on the LENGTH fallback
// of a zlink 1.3 library (EngineFramings); a transport the native library lacks (zlink_has) is
// ignored with the reason.
// Each test prints its seed; NETZLINK_FUZZ_SEED replays it, NETZLINK_FUZZ_ITERATIONS runs more
// rounds (default 2 per transport and framing).
namespace NetZlink.Tests.Engine;

public sealed class EngineModelTests : EngineFixture
{
    private static readonly TimeSpan DrainBound = TimeSpan.FromSeconds(60);

    [RequiresStreamClient]
    [TestCase("tcp", "batch"), CancelAfter(600_000)]
    [TestCase("tcp", "custom")]
    [TestCase("tcp", "length")]
    [TestCase("tls", "batch")]
    [TestCase("tls", "custom")]
    [TestCase("ws", "batch")]
    [TestCase("ws", "custom")]
    [TestCase("wss", "batch")]
    [TestCase("wss", "custom")]
    public void RandomPeersPostersAndCloses_KeepEveryStreamExact_AndAccountForEveryPacket(string transport, string framing)
    {
        RequireTransport(transport);
        Random master = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(2);
        long refused = 0;
        using TestCertificates? certificates = transport is "tls" or "wss" ? TestCertificates.Create() : null;
        for (int round = 0; round < rounds; round++)
        {
            int roundSeed = master.Next();
            // Round 1 of every four has a handler that throws mid-run.
            refused += RunRound(roundSeed, throwing: round % 4 == 1, TimeSpan.FromSeconds(5), transport, framing, certificates);
        }

        TestContext.Out.WriteLine($"{rounds} rounds over {transport} ({framing}) passed (seed {seed}); frames the sockets refused at their high-water mark and the engine retried: {refused}");
        Assert.That(refused, Is.GreaterThan(0), "no round reached a high-water mark: the backpressure path went untested");
    }

    /// <summary>Ignores the test, with the reason, when the native library lacks <paramref name="transport"/> (wss needs ws and tls).</summary>
    internal static void RequireTransport(string transport)
    {
        foreach (string capability in transport switch { "wss" => new[] { "ws", "tls" }, "tcp" => [], _ => [transport] })
        {
            if (!ZlinkLibrary.Has(capability))
            {
                Assert.Ignore($"{transport}:// needs a native library with {capability} (zlink_has(\"{capability}\") is 0)");
            }
        }
    }

    /// <summary>Runs one round; returns how many frames the sockets refused at their high-water mark.</summary>
    private static long RunRound(int seed, bool throwing, TimeSpan runFor, string transport, string framing, TestCertificates? certificates)
    {
        var random = new Random(seed);
        int connections = random.Next(8, 41);
        var options = new EngineOptions
        {
            // Small enough that the larger packets (up to 16 KB) are read one by one, on their own.
            ReceiveChunkSize = random.Next(2) == 0 ? 64 * 1024 : random.Next(1024, 20_000),
            ShardCount = random.Next(1, 4),
            HighWaterMark = random.Next(1, 9),
            SendBufferSize = random.Next(4096, 32769),
            ReceiveBufferSize = random.Next(4096, 65537),
            SendQueueCapacityPerConnection = random.Next(20_000, 200_000),
            SendQueueCapacityPerShard = random.Next(100_000, 1_000_000),
            MaxPendingBytesPerConnection = random.Next(20_000, 200_000),
            ConnectTimeout = TimeSpan.FromSeconds(10),
            Tls = certificates is null ? null : new EngineTlsOptions { CaFile = certificates.Ca, Hostname = "localhost" },
        };
        EngineFramings.Apply(options, framing);
        int maxFiller = random.Next(2) == 0 ? 64 : 16_000;
        double closeChance = random.NextDouble() * 0.0002;
        int posterCount = random.Next(1, 4);
        string config = $"{transport} ({framing}) round seed {seed}: {connections} connections, receive buffer {options.ReceiveChunkSize}, {options.ShardCount} shards, hwm {options.HighWaterMark}, sndbuf {options.SendBufferSize}, "
            + $"post capacity {options.SendQueueCapacityPerConnection}/{options.SendQueueCapacityPerShard}, filler ≤ {maxFiller}, {posterCount} posters, throwing {throwing}";
        TestContext.Out.WriteLine(config);

        using var server = new ModelServer(seed, resetShare: random.NextDouble() * 0.3, transport, certificates);
        options.Endpoints = [server.Endpoint];
        var model = new Model(connections, seed, maxFiller, closeChance, throwing ? (ThrowIn)random.Next(1, 4) : ThrowIn.Nowhere);
        TimeSpan throwAt = runFor * random.NextDouble();
        // Connection i is posted to when i % 3 == 0 (by poster (i / 3) % posterCount), else the handler sends.
        for (int i = 0; i < connections; i++)
        {
            model.Conns[i].Posted = i % 3 == 0;
        }

        var engine = new ClientEngine(connections, options);
        try
        {
            engine.Start(shard => new ModelHandler(model, shard));
            Assert.That(engine.ConnectsResolved.Wait(TimeSpan.FromSeconds(30)) || throwing, Is.True, $"connects did not resolve; {config}");

            var posters = new Thread[posterCount];
            for (int p = 0; p < posterCount; p++)
            {
                int poster = p;
                posters[p] = new Thread(() => Post(engine, model, poster, posterCount, seed + poster + 1)) { IsBackground = true, Name = $"model-poster-{p}" };
                posters[p].Start();
            }

            if (throwing)
            {
                Thread.Sleep(throwAt);
                model.ThrowArmed = true;
                TestContext.Out.WriteLine($"  the handler throws from {model.ThrowIn} after {throwAt.TotalSeconds:0.0} s");
                Thread.Sleep(runFor - throwAt);
            }
            else
            {
                Thread.Sleep(runFor);
            }

            model.StopSending = true;
            foreach (Thread poster in posters)
            {
                Assert.That(poster.Join(TimeSpan.FromSeconds(30)), Is.True, $"a poster did not finish; {config}");
            }

            server.Calm();
            if (throwing)
            {
                Assert.That(engine.Stopped.Wait(DrainBound), Is.True, $"the engine did not stop after its handler threw; {config}");
            }
            else
            {
                WaitForDrain(engine, model, config);
            }
        }
        finally
        {
            engine.Dispose();
        }

        Assert.That(engine.Stopped.IsCompleted, Is.True, "Stopped after Dispose");
        Verify(engine, server, model, throwing, config);
        return engine.ReadCounters().FramesQueued;
    }

    private static void WaitForDrain(ClientEngine engine, Model model, string config)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            SendQueueCounters posts = engine.ReadSendQueueCounters();
            List<string> waiting = model.Conns
                .Where(c => !c.Ended && Volatile.Read(ref c.Echoed) != Volatile.Read(ref c.Accepted))
                .Select(c => $"#{c.Index} {Volatile.Read(ref c.Echoed)}/{Volatile.Read(ref c.Accepted)}")
                .ToList();
            bool postsSettled = posts.BytesHeld == 0 && posts.Accepted == posts.Sent + posts.DroppedClosed + posts.DroppedStopped;
            if (waiting.Count == 0 && postsSettled)
            {
                return;
            }

            if (clock.Elapsed > DrainBound || engine.Stopped.IsCompleted)
            {
                Assert.Fail($"not drained after {clock.Elapsed.TotalSeconds:0} s (engine stopped: {engine.Stopped.IsCompleted}, fault: {engine.Fault?.Message}): "
                    + $"connections echoed/sent {string.Join(", ", waiting.Take(10))}; posts {posts}; {config}");
            }

            Thread.Sleep(20);
        }
    }

    private static void Verify(ClientEngine engine, ModelServer server, Model model, bool throwing, string config)
    {
        SendQueueCounters posts = engine.ReadSendQueueCounters();
        long postedByPosters = model.Conns.Where(c => c.Posted).Sum(c => c.Accepted);
        long packets = model.Conns.Sum(c => c.Accepted);
        long echoed = model.Conns.Sum(c => c.Echoed);
        long lost = model.Conns.Where(c => c.EndedBeforeDrain).Sum(c => c.Accepted - c.Echoed);
        TestContext.Out.WriteLine(
            $"  sent {packets} packets, echoed {echoed}, lost with ended connections {lost}; posts {posts}; "
            + $"ended before the drain {model.Conns.Count(c => c.EndedBeforeDrain)} (server resets {server.Peers.Count(p => p.WasReset)}); "
            + $"refused at the high-water mark {engine.ReadCounters().FramesQueued}; fault: {engine.Fault?.Message}");

        Assert.Multiple(() =>
        {
            foreach (ModelServer.Peer peer in server.Peers)
            {
                Assert.That(peer.Violation, Is.Null, config);
                if (peer.Index >= 0)
                {
                    Conn conn = model.Conns[peer.Index];
                    Assert.That(peer.Packets, Is.InRange(conn.Echoed, conn.Accepted), $"server packets of #{peer.Index} between echoed and sent; {config}");
                }
            }

            foreach (Conn conn in model.Conns)
            {
                Assert.That(conn.Violation, Is.Null, config);
                Assert.That(conn.Disconnects, Is.EqualTo(conn.WasConnected ? 1 : 0), $"OnDisconnected calls of #{conn.Index} (connected {conn.WasConnected}); {config}");
                if (!throwing && !conn.EndedBeforeDrain)
                {
                    Assert.That(conn.Echoed, Is.EqualTo(conn.Accepted), $"#{conn.Index} open through the drain got every packet back; {config}");
                }

                if (throwing && conn.WasConnected)
                {
                    Assert.That(conn.LastReason, Is.EqualTo(ConnectionEndReason.EngineFault).Or.EqualTo(ConnectionEndReason.Remote).Or.EqualTo(ConnectionEndReason.Local), $"#{conn.Index}; {config}");
                }
            }

            Assert.That(posts.Accepted, Is.EqualTo(postedByPosters), $"the engine's accepted posts are the posters' own count; {config}");
            Assert.That(posts.Sent + posts.DroppedClosed + posts.DroppedStopped, Is.EqualTo(posts.Accepted), $"every accepted post sent or dropped: {posts}; {config}");
            Assert.That(posts.BytesHeld, Is.Zero, $"no posting capacity held after the stop; {config}");
            if (throwing)
            {
                Assert.That(model.Thrown, Is.True, $"the handler was due to throw; {config}");
                Assert.That(engine.Fault?.InnerException, Is.SameAs(model.ThrownException), $"Fault carries the handler's exception; {config}");
                Assert.That(engine.ConnectsResolved.IsFaulted || engine.ConnectsResolved.IsCompletedSuccessfully, Is.True);
                Assert.That(model.Conns.Where(c => c.WasConnected && !c.EndedBeforeDrain).All(c => c.LastReason is ConnectionEndReason.EngineFault or ConnectionEndReason.Remote or ConnectionEndReason.Local), Is.True);
            }
            else
            {
                Assert.That(engine.Fault, Is.Null, config);
            }
        });
    }

    /// <summary>One poster thread: its own connections, TrySend or SendAsync (sometimes cancelled), sequence numbers in post order.</summary>
    private static void Post(ClientEngine engine, Model model, int poster, int posterCount, int seed)
    {
        var random = new Random(seed);
        Conn[] mine = model.Conns.Where(c => c.Posted && (c.Index / 3) % posterCount == poster).ToArray();
        if (mine.Length == 0)
        {
            return;
        }

        byte[] frame = new byte[ModelPacket.MinLength + model.MaxFiller];
        while (!model.StopSending && engine.IsRunning)
        {
            Conn conn = mine[random.Next(mine.Length)];
            if (!conn.Connected || conn.Ended)
            {
                Thread.Yield();
                continue;
            }

            // Some connections are flooded (no limit in flight), others keep a window.
            int window = conn.Index % 2 == 0 ? int.MaxValue : 30;
            if (Volatile.Read(ref conn.Accepted) - Volatile.Read(ref conn.Echoed) >= window)
            {
                Thread.Yield();
                continue;
            }

            int length = ModelPacket.Write(frame, conn.Index, conn.Accepted, random.Next(model.MaxFiller + 1));
            bool accepted;
            if (random.Next(2) == 0)
            {
                accepted = engine.TrySend(conn.Connection, frame.AsSpan(0, length));
                if (!accepted)
                {
                    Thread.Sleep(random.Next(2));
                }
            }
            else
            {
                using var cancel = new CancellationTokenSource(random.Next(1, 50));
                try
                {
                    accepted = engine.SendAsync(conn.Connection, frame.AsMemory(0, length), cancel.Token).AsTask().GetAwaiter().GetResult();
                }
                catch (OperationCanceledException)
                {
                    accepted = false;
                }
            }

            if (accepted)
            {
                Volatile.Write(ref conn.Accepted, conn.Accepted + 1);
            }
        }
    }

    private enum ThrowIn
    {
        Nowhere,
        OnPacket,
        OnPass,
        OnDisconnected,
    }

    private sealed class Model(int connections, int seed, int maxFiller, double closeChance, ThrowIn throwIn)
    {
        public Conn[] Conns { get; } = Enumerable.Range(0, connections).Select(i => new Conn(i)).ToArray();

        public int Seed { get; } = seed;

        public int MaxFiller { get; } = maxFiller;

        public double CloseChance { get; } = closeChance;

        /// <summary>Which callback throws once <see cref="ThrowArmed"/> is set.</summary>
        public ThrowIn ThrowIn { get; } = throwIn;

        public volatile bool ThrowArmed;

        public volatile bool StopSending;

        public volatile bool Thrown;

        public Exception? ThrownException;

        private int _throwTaken;

        /// <summary>Throws, once, when armed and <paramref name="from"/> is the chosen callback.</summary>
        public void MaybeThrow(ThrowIn from)
        {
            // Once in all: two shards may reach here at the same moment.
            if (ThrowArmed && ThrowIn == from && Interlocked.Exchange(ref _throwTaken, 1) == 0)
            {
                ThrownException = new InvalidOperationException($"the model handler throws from {from} on purpose");
                Thrown = true;
                throw ThrownException;
            }
        }
    }

    private sealed class Conn(int index)
    {
        public int Index { get; } = index;

        public bool Posted;
        public Connection Connection;
        public volatile bool Connected;
        public volatile bool Ended;
        public bool WasConnected;
        public bool EndedBeforeDrain;
        public long Accepted;
        public long Echoed;
        public int Disconnects;
        public ConnectionEndReason LastReason;
        public string? Violation;
    }

    private sealed class ModelHandler(Model model, EngineShard shard) : IConnectionHandler
    {
        private readonly Random _random = new(model.Seed ^ (shard.Index * 104729));

        public void OnConnected(EngineShard shard, Connection connection)
        {
            Conn conn = model.Conns[connection.Index];
            conn.Connection = connection;
            conn.WasConnected = true;
            conn.Connected = true;
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            Conn conn = model.Conns[connection.Index];
            string? problem = ModelPacket.Check(packet, connection.Index, conn.Echoed);
            if (problem is not null)
            {
                conn.Violation ??= $"echo of connection {connection.Index}: {problem}";
            }

            Volatile.Write(ref conn.Echoed, conn.Echoed + 1);
            model.MaybeThrow(ThrowIn.OnPacket);
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
            Conn conn = model.Conns[connection.Index];
            conn.Disconnects++;
            conn.LastReason = reason;
            conn.EndedBeforeDrain = !model.StopSending || conn.EndedBeforeDrain || reason != ConnectionEndReason.EngineStopped;
            conn.Ended = true;
            model.MaybeThrow(ThrowIn.OnDisconnected);
        }

        public void OnPass(EngineShard shard)
        {
            shard.WakeBy(Stopwatch.GetTimestamp() + (Stopwatch.Frequency / 200));
            model.MaybeThrow(ThrowIn.OnPass);
            if (model.ThrowArmed && model.ThrowIn == ThrowIn.OnDisconnected && !model.Thrown)
            {
                // Make a disconnect happen: the handler's OnDisconnected throws from inside Close.
                for (int slot = 0; slot < shard.SlotCount; slot++)
                {
                    if (shard.IsConnected(slot))
                    {
                        shard.Close(shard.ConnectionAt(slot));
                        break;
                    }
                }
            }

            if (model.StopSending)
            {
                return;
            }

            Span<byte> frame = shard.SendScratch;
            for (int slot = 0; slot < shard.SlotCount; slot++)
            {
                Connection connection = shard.ConnectionAt(slot);
                Conn conn = model.Conns[connection.Index];
                if (conn.Posted || !shard.IsConnected(slot))
                {
                    continue;
                }

                if (_random.NextDouble() < model.CloseChance)
                {
                    shard.Close(connection);
                    continue;
                }

                int window = connection.Index % 5 == 1 ? 300 : 1 + (connection.Index % 30);
                int burst = _random.Next(1, 8);
                while (burst-- > 0 && conn.Accepted - conn.Echoed < window)
                {
                    int length = ModelPacket.Write(frame, conn.Index, conn.Accepted, _random.Next(model.MaxFiller + 1));
                    SendResult result = shard.Send(connection, frame[..length]);
                    if (result is SendResult.Sent or SendResult.Queued)
                    {
                        Volatile.Write(ref conn.Accepted, conn.Accepted + 1);
                    }
                    else
                    {
                        break;
                    }
                }
            }
        }
    }
}
