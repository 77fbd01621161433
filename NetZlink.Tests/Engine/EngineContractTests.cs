// The engine's posting and fault contracts, one at a time (the model-based test mixes them):
// posting is bounded and fair to receives, SendAsync waits for room and a cancelled wait accepts
// nothing, and a handler exception from any callback stops the whole engine with every
// connection ending exactly once.
namespace NetZlink.Tests.Engine;

public sealed class EngineContractTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public void PostingToPeersThatDoNotRead_IsBounded_AndTheOtherConnectionsKeepEchoing()
    {
        using var stalled = new RawTcpServer();
        using var echo = new StreamEchoServer();
        var options = new EngineOptions
        {
            // even connections go to the server that never reads, odd ones to the echo server
            Endpoints = [stalled.Endpoint, echo.Endpoint],
            ShardCount = 2,
            HighWaterMark = 4,
            SendBufferSize = 8192,
            SendQueueCapacityPerConnection = 64 * 1024,
            SendQueueCapacityPerShard = 512 * 1024,
            ConnectRetries = 0,
        };
        const int connections = 40;
        var echoes = new long[1];
        using var engine = new ClientEngine(connections, options);
        var connected = new ConcurrentBag<Connection>();
        engine.Start(_ => new WindowHandler(connected, echoes, c => c.Index % 2 == 1));
        Assert.That(engine.ConnectsResolved.Wait(Patience), Is.True, "connects");
        Connection[] flooded = connected.Where(c => c.Index % 2 == 0).ToArray();
        Assert.That(flooded, Has.Length.EqualTo(connections / 2));

        long heapBefore = GC.GetTotalMemory(forceFullCollection: true);
        long accepted = 0, refused = 0, maxHeld = 0;
        using var stop = new CancellationTokenSource();
        Task[] posters = Enumerable.Range(0, 4).Select(p => Task.Factory.StartNew(
            () =>
            {
                byte[] frame = new byte[1024];
                BinaryPrimitives.WriteUInt32BigEndian(frame, 1020); // one packet
                var random = new Random(p);
                while (!stop.IsCancellationRequested)
                {
                    if (engine.TrySend(flooded[random.Next(flooded.Length)], frame))
                    {
                        Interlocked.Increment(ref accepted);
                    }
                    else
                    {
                        Interlocked.Increment(ref refused);
                    }
                }
            },
            TaskCreationOptions.LongRunning)).ToArray();

        var clock = Stopwatch.StartNew();
        long echoesAtStart = Interlocked.Read(ref echoes[0]);
        while (clock.Elapsed < TimeSpan.FromSeconds(3))
        {
            maxHeld = Math.Max(maxHeld, engine.ReadSendQueueCounters().BytesHeld);
            Thread.Sleep(10);
        }

        long echoesDuringFlood = Interlocked.Read(ref echoes[0]) - echoesAtStart;
        stop.Cancel();
        Task.WaitAll(posters);
        long heapAfter = GC.GetTotalMemory(forceFullCollection: true);
        SendQueueCounters posts = engine.ReadSendQueueCounters();
        TestContext.Out.WriteLine(
            $"4 posters for 3 s: accepted {accepted}, refused {refused}, most bytes held {maxHeld}, posts {posts}; "
            + $"echoes on the other connections meanwhile {echoesDuringFlood}; heap {heapBefore / 1024} KB -> {heapAfter / 1024} KB");

        Assert.Multiple(() =>
        {
            Assert.That(refused, Is.Positive, "TrySend said no once the capacity was used");
            Assert.That(maxHeld, Is.LessThanOrEqualTo(2 * options.SendQueueCapacityPerShard), "at most the shards' capacity held");
            Assert.That(maxHeld, Is.LessThanOrEqualTo(flooded.Length * (long)options.SendQueueCapacityPerConnection), "at most the connections' capacity held");
            Assert.That(posts.Accepted, Is.EqualTo(accepted), "the engine counted what TrySend accepted");
            Assert.That(heapAfter - heapBefore, Is.LessThan(64L * 1024 * 1024), "the managed heap did not grow with the posts");
            Assert.That(echoesDuringFlood, Is.GreaterThan(1000), "receives kept flowing on the other connections while posts were pending");
        });

        engine.Dispose();
        posts = engine.ReadSendQueueCounters();
        Assert.That(posts.Sent + posts.DroppedClosed + posts.DroppedStopped, Is.EqualTo(posts.Accepted), $"every accepted post sent or dropped: {posts}");
        Assert.That(posts.DroppedStopped, Is.Positive, "what the stalled peers never took was dropped as EngineStopped and counted");
        Assert.That(posts.BytesHeld, Is.Zero);
    }

    [RequiresStreamClient]
    [Test, CancelAfter(120_000)]
    public async Task SendAsync_WaitsForRoom_CompletesWhenThePeerReads_AndACancelledWaitAcceptsNothing()
    {
        using var server = new RawTcpServer();
        var options = new EngineOptions
        {
            Endpoints = [server.Endpoint],
            ShardCount = 1,
            HighWaterMark = 2,
            SendBufferSize = 4096,
            SendQueueCapacityPerConnection = 16 * 1024,
            ConnectRetries = 0,
        };
        var connected = new ConcurrentBag<Connection>();
        using var engine = new ClientEngine(1, options);
        engine.Start(_ => new WindowHandler(connected, new long[1], _ => false));
        System.Net.Sockets.Socket peer = server.Accept(Patience);
        peer.ReceiveBufferSize = 4096;
        Assert.That(engine.ConnectsResolved.Wait(Patience), Is.True);
        Connection connection = connected.Single();

        // Fill everything: the kernel buffers, the socket's queue, then the posting capacity.
        var expected = new List<byte>();
        long sequence = 0;
        byte[] Frame()
        {
            // One packet: [body length][sequence][filler].
            byte[] frame = new byte[1000];
            BinaryPrimitives.WriteUInt32BigEndian(frame, 996);
            BinaryPrimitives.WriteInt64BigEndian(frame.AsSpan(4), sequence++);
            frame.AsSpan(12).Fill((byte)sequence);
            return frame;
        }

        var clock = Stopwatch.StartNew();
        int refusals = 0;
        while (refusals < 200 && clock.Elapsed < Patience)
        {
            byte[] frame = Frame();
            if (engine.TrySend(connection, frame))
            {
                expected.AddRange(frame);
                refusals = 0;
            }
            else
            {
                sequence--;
                refusals++;
                Thread.Sleep(1);
            }
        }

        Assert.That(refusals, Is.EqualTo(200), "TrySend kept saying no once the peer stopped reading");
        long acceptedBefore = engine.ReadSendQueueCounters().Accepted;

        using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(200)))
        {
            byte[] cancelled = Frame();
            sequence--;
            Assert.That(async () => await engine.SendAsync(connection, cancelled, cancel.Token), Throws.InstanceOf<OperationCanceledException>());
        }

        Assert.That(engine.ReadSendQueueCounters().Accepted, Is.EqualTo(acceptedBefore), "a cancelled wait accepted nothing");

        byte[] waiting = Frame();
        ValueTask<bool> post = engine.SendAsync(connection, waiting);
        await Task.Delay(200);
        Assert.That(post.IsCompleted, Is.False, "SendAsync waits while there is no room");

        // The peer reads: room comes back, the waiting post is accepted, and the stream is exact.
        expected.AddRange(waiting);
        var reader = Task.Run(() => RawTcpServer.ReadExactly(peer, expected.Count, Patience));
        Assert.That(await post.AsTask().WaitAsync(Patience), Is.True, "the waiting post was accepted once the peer read");
        byte[] received = await reader;
        Assert.That(received, Is.EqualTo(expected.ToArray()), "the peer read exactly the accepted frames, in order");
        Assert.That(engine.ReadSendQueueCounters(), Is.EqualTo(new SendQueueCounters(acceptedBefore + 1, acceptedBefore + 1, 0, 0, 0)));
    }

    [RequiresStreamClient]
    [TestCase("OnConnected")]
    [TestCase("OnPacket")]
    [TestCase("OnPass")]
    [TestCase("OnDisconnected")]
    [CancelAfter(120_000)]
    public void AHandlerException_StopsTheWholeEngine_AndEveryConnectionEndsExactlyOnce(string callback)
    {
        using var echo = new StreamEchoServer();
        var options = new EngineOptions { Endpoints = [echo.Endpoint], ShardCount = 2, ConnectRetries = 0 };
        const int connections = 12;
        var handlers = new ConcurrentBag<ThrowingHandler>();
        var exception = new InvalidOperationException($"thrown from {callback} on purpose");
        var engine = new ClientEngine(connections, options);
        try
        {
            engine.Start(_ =>
            {
                var handler = new ThrowingHandler(callback, exception, connections);
                handlers.Add(handler);
                return handler;
            });
            Assert.That(engine.Stopped.Wait(Patience), Is.True, "the engine stopped by itself");
        }
        finally
        {
            engine.Dispose();
        }

        var ends = handlers.SelectMany(h => h.Ends).ToList();
        var connectedIndexes = handlers.SelectMany(h => h.ConnectedIndexes).ToList();
        TestContext.Out.WriteLine($"{callback}: {connectedIndexes.Count} connected, ends {string.Join(", ", ends.GroupBy(e => e.Reason).Select(g => $"{g.Key} {g.Count()}"))}; fault: {engine.Fault?.Message}");
        Assert.Multiple(() =>
        {
            Assert.That(engine.Fault?.InnerException, Is.SameAs(exception), "Fault carries the handler's exception");
            Assert.That(engine.Fault?.Message, Does.Contain(exception.Message));
            Assert.That(engine.ConnectsResolved.IsCompleted, Is.True);
            Assert.That(engine.IsRunning, Is.False);
            Assert.That(ends.Select(e => e.Index), Is.Unique, "no connection ended twice");
            Assert.That(ends.Select(e => e.Index).Order(), Is.EqualTo(connectedIndexes.Order()), "every connection that connected ended");
            // The one whose OnDisconnected threw ended by its own Close; every other by the fault.
            Assert.That(ends.Count(e => e.Reason != ConnectionEndReason.EngineFault), Is.EqualTo(callback == "OnDisconnected" ? 1 : 0), "ends by EngineFault");
        });
    }

    /// <summary>Keeps a window of 4 one-kilobyte packets in flight on the connections <paramref name="sends"/> picks, counting echoes.</summary>
    private sealed class WindowHandler(ConcurrentBag<Connection> connected, long[] echoes, Func<Connection, bool> sends) : IConnectionHandler
    {
        private readonly Dictionary<int, int> _inFlight = new();

        public void OnConnected(EngineShard shard, Connection connection)
        {
            connected.Add(connection);
            _inFlight[connection.Slot] = 0;
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            _inFlight[connection.Slot]--;
            Interlocked.Increment(ref echoes[0]);
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
            Span<byte> packet = shard.SendScratch[..1024];
            LengthPrefixFramer.WriteHeader(packet, 1020);
            foreach (int slot in _inFlight.Keys)
            {
                Connection connection = shard.ConnectionAt(slot);
                while (sends(connection) && _inFlight[slot] < 4 && shard.Send(connection, packet) is SendResult.Sent or SendResult.Queued)
                {
                    _inFlight[slot]++;
                }
            }
        }
    }

    /// <summary>Echoes one small packet per connection and throws from the chosen callback once every connection has connected.</summary>
    private sealed class ThrowingHandler(string callback, Exception exception, int connections) : IConnectionHandler
    {
        private static int s_connected;
        private static int s_thrown;
        private static int s_closing;

        public List<int> ConnectedIndexes { get; } = new();

        public List<(int Index, ConnectionEndReason Reason)> Ends { get; } = new();

        public void OnConnected(EngineShard shard, Connection connection)
        {
            ConnectedIndexes.Add(connection.Index);
            int count = Interlocked.Increment(ref s_connected);
            if (callback == "OnConnected" && count == connections / 2)
            {
                Throw();
            }

            Span<byte> packet = shard.SendScratch[..8];
            LengthPrefixFramer.WriteHeader(packet, 4);
            _ = shard.Send(connection, packet);
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            if (callback == "OnPacket" && Volatile.Read(ref s_connected) >= connections)
            {
                Throw();
            }
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
            Ends.Add((connection.Index, reason));
            if (callback == "OnDisconnected" && reason == ConnectionEndReason.Local)
            {
                Throw();
            }
        }

        public void OnPass(EngineShard shard)
        {
            if (Volatile.Read(ref s_connected) < connections)
            {
                return;
            }

            if (callback == "OnPass")
            {
                Throw();
            }

            // One Close in all, from whichever shard gets there first.
            if (callback == "OnDisconnected" && Interlocked.Exchange(ref s_closing, 1) == 0)
            {
                for (int slot = 0; slot < shard.SlotCount; slot++)
                {
                    if (shard.IsConnected(slot))
                    {
                        shard.Close(shard.ConnectionAt(slot));
                        return;
                    }
                }
            }
        }

        public static void Reset()
        {
            s_connected = 0;
            s_thrown = 0;
            s_closing = 0;
        }

        private void Throw()
        {
            if (Interlocked.Exchange(ref s_thrown, 1) == 0)
            {
                throw exception;
            }
        }
    }

    [SetUp]
    public void ResetThrowingHandler() => ThrowingHandler.Reset();
}
