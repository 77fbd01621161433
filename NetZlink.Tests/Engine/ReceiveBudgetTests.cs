// Receive budgets (docs/engine.md, "Receive memory"): the engine holds only the bytes of an
// incomplete packet that arrived, and a peer that holds more than its connection's budget, or
// takes its shard past the shard's, is closed with ReceiveBudgetExceeded (counted), while the
// engine and the other connections run on.
namespace NetZlink.Tests.Engine;

public sealed class ReceiveBudgetTests : EngineFixture
{
    [Test]
    public void AHeaderAnnouncing16MiB_SetsAsideOnlyTheBytesThatArrived()
    {
        var pool = new CountingArrayPool(16 * 1024 * 1024);
        var largest = new LargestRentPool(pool);
        var reassembler = new PacketReassembler(new EngineFramings.U32Framer(), 16 * 1024 * 1024, largest);
        var partial = default(PartialPacket);
        var sink = new CountingPacketSink();
        byte[] start = new byte[4 + 1000];
        BinaryPrimitives.WriteUInt32BigEndian(start, (16 * 1024 * 1024) - 4);
        Assert.That(reassembler.Feed(ref partial, start, ref sink), Is.EqualTo(ReassemblyResult.Consumed));
        Assert.That(reassembler.Feed(ref partial, new byte[24], ref sink), Is.EqualTo(ReassemblyResult.Consumed));
        Assert.That(partial.Length, Is.EqualTo(1028));
        Assert.That(largest.Largest, Is.LessThanOrEqualTo(2048), "a buffer for what arrived (it used to be the 16 MiB the header announced)");

        // As more arrives the buffer grows, at least doubling, and never past the packet.
        for (int i = 0; i < 64; i++)
        {
            Assert.That(reassembler.Feed(ref partial, new byte[64 * 1024], ref sink), Is.EqualTo(ReassemblyResult.Consumed));
            Assert.That(largest.Largest, Is.LessThanOrEqualTo(2 * (long)partial.Length), $"after {partial.Length} bytes");
        }

        reassembler.Release(ref partial);
        Assert.That(pool.Outstanding, Is.Zero);
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public async Task APeerOverItsBudget_OrOverTheShards_IsClosedWithTheReason_AndOthersAreEchoed()
    {
        var options = new EngineOptions
        {
            Endpoints = ["tcp://127.0.0.1:*"],
            Framer = new EngineFramings.U32Framer(),
            ReceiveBudgetPerConnection = 64 * 1024,
            ReceiveBudgetPerShard = 160 * 1024,
        };
        await using var server = new ServerEngine(options);
        EngineChannel channel = server.StartChannel();
        var ends = new List<(int Index, ConnectionEndReason Reason, int Lost)>();
        var order = new List<int>();
        Task loop = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    if (e.Kind == EngineEventKind.Connected)
                    {
                        lock (order)
                        {
                            order.Add(e.Connection.Index);
                        }
                    }
                    else if (e.Kind == EngineEventKind.Packet)
                    {
                        await channel.SendAsync(e.Connection, e.PacketMemory);
                    }
                    else if (e.Kind == EngineEventKind.Disconnected)
                    {
                        lock (ends)
                        {
                            ends.Add((e.Connection.Index, e.Reason!.Value, e.LostBytes));
                        }
                    }
                }
            }
        });
        var endpoint = new IPEndPoint(IPAddress.Loopback, int.Parse(server.BoundEndpoints[0].Split(':')[^1], System.Globalization.CultureInfo.InvariantCulture));

        // Over its own budget: 70 KB of a 1 MiB packet.
        using Socket greedy = await Connected(endpoint);
        await Send(greedy, announced: 1024 * 1024, sent: 70 * 1024);
        await WaitFor(() => Ends(ends) == 1);
        Assert.That(ends[0].Reason, Is.EqualTo(ConnectionEndReason.ReceiveBudgetExceeded));
        Assert.That(await greedy.ReceiveAsync(new byte[16], SocketFlags.None), Is.Zero, "the peer sees its connection closed");

        // Within their own budgets, three of 60 KB take the shard past 160 KiB: the third is closed.
        using Socket first = await Connected(endpoint);
        await Send(first, announced: 1024 * 1024, sent: 60 * 1024);
        using Socket second = await Connected(endpoint);
        await Send(second, announced: 1024 * 1024, sent: 60 * 1024);
        await WaitFor(() => server.ReadCounters().BytesReceived >= (70 + 120) * 1024);
        using Socket third = await Connected(endpoint);
        await Send(third, announced: 1024 * 1024, sent: 60 * 1024);
        await WaitFor(() => Ends(ends) == 2);
        Assert.That(await third.ReceiveAsync(new byte[16], SocketFlags.None), Is.Zero, "the one that went over is closed");

        // The engine runs on: an honest client is echoed, and the first two still hold their bytes.
        using Socket honest = await EchoedExactly(endpoint);
        EngineCounters counters = server.ReadCounters();
        await server.StopAsync();
        await loop;
        Assert.Multiple(() =>
        {
            Assert.That(counters.ReceiveBudgetExceeded, Is.EqualTo(2));
            Assert.That(server.Fault, Is.Null);
            Assert.That(ends[1].Reason, Is.EqualTo(ConnectionEndReason.ReceiveBudgetExceeded));
            Assert.That(ends[1].Index, Is.EqualTo(order[3]), "the third of the three is the one closed");
            Assert.That(ends.Skip(2).Select(x => x.Reason), Is.All.EqualTo(ConnectionEndReason.EngineStopped));
        });
    }

    // The default framer: the native library holds the incomplete packets, and the shard's budget is
    // its socket's ZLINK_STREAM_RCVBUDGET (there was no shard-wide limit on this path).
    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public async Task WithTheDefaultFramer_APeerThatTakesTheShardOverItsBudget_IsClosedWithTheReason()
    {
        NativeNeeds.RequireStreamFraming();
        var options = new EngineOptions
        {
            Endpoints = ["tcp://127.0.0.1:*"],
            ReceiveBudgetPerConnection = 64 * 1024,
            ReceiveBudgetPerShard = 200 * 1024,
        };
        await using var server = new ServerEngine(options);
        EngineChannel channel = server.StartChannel();
        var ends = new List<(int Index, ConnectionEndReason Reason, int Lost)>();
        Task loop = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    if (e.Kind == EngineEventKind.Packet)
                    {
                        await channel.SendAsync(e.Connection, e.PacketMemory);
                    }
                    else if (e.Kind == EngineEventKind.Disconnected)
                    {
                        lock (ends)
                        {
                            ends.Add((e.Connection.Index, e.Reason!.Value, e.LostBytes));
                        }
                    }
                }
            }
        });
        var endpoint = new IPEndPoint(IPAddress.Loopback, int.Parse(server.BoundEndpoints[0].Split(':')[^1], System.Globalization.CultureInfo.InvariantCulture));

        // Four peers each hold 59 KB of a 60 KB packet (within their own 64 KiB): 236 KB > 200 KiB.
        var peers = new List<Socket>();
        for (int i = 0; i < 4; i++)
        {
            Socket peer = await Connected(endpoint);
            peers.Add(peer);
            await Send(peer, announced: 60 * 1024, sent: 59 * 1024);
            await Task.Delay(50);
        }

        // An honest client is echoed (its read also moves the last peer's bytes out of the library's scratch).
        using Socket honest = await EchoedExactly(endpoint);
        await WaitFor(() => Ends(ends) == 1);
        EngineCounters counters = server.ReadCounters();
        await server.StopAsync();
        await loop;
        foreach (Socket peer in peers)
        {
            peer.Dispose();
        }

        Assert.Multiple(() =>
        {
            Assert.That(ends[0].Reason, Is.EqualTo(ConnectionEndReason.ReceiveBudgetExceeded));
            Assert.That(counters.ReceiveBudgetExceeded, Is.EqualTo(1));
            Assert.That(counters.ProtocolErrors, Is.Zero);
            Assert.That(server.Fault, Is.Null);
            Assert.That(ends.Skip(1).Select(x => x.Reason), Is.All.EqualTo(ConnectionEndReason.EngineStopped), "the other three, and the honest client, until the stop");
        });
    }

    [Test]
    public void TheBudgets_AreValidated()
    {
        var small = Assert.Throws<ArgumentOutOfRangeException>(() => new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], ReceiveBudgetPerConnection = 4 }))!;
        Assert.That(small.ParamName, Is.EqualTo("ReceiveBudgetPerConnection"));
        var shard = Assert.Throws<ArgumentOutOfRangeException>(() => new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], ReceiveBudgetPerShard = 1024 }))!;
        Assert.That(shard.Message, Does.Contain("ReceiveBudgetPerShard must be at least").And.Contain("(ReceiveBudgetPerConnection: a shard holds at least one connection's bytes)"));
    }

    private static int Ends(List<(int, ConnectionEndReason, int)> ends)
    {
        lock (ends)
        {
            return ends.Count;
        }
    }

    private static async Task<Socket> Connected(IPEndPoint endpoint)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = 10_000 };
        await socket.ConnectAsync(endpoint);
        return socket;
    }

    /// <summary>A new client whose one packet (1,000 random bytes of body) comes back byte for byte; it stays connected.</summary>
    private static async Task<Socket> EchoedExactly(IPEndPoint endpoint)
    {
        Socket honest = await Connected(endpoint);
        byte[] packet = new byte[4 + 1000];
        BinaryPrimitives.WriteUInt32BigEndian(packet, 1000);
        Random.Shared.NextBytes(packet.AsSpan(4));
        await honest.SendAsync(packet, SocketFlags.None);
        byte[] echo = new byte[packet.Length];
        for (int got = 0; got < echo.Length;)
        {
            got += await honest.ReceiveAsync(echo.AsMemory(got), SocketFlags.None);
        }

        Assert.That(echo, Is.EqualTo(packet), "the honest client's echo");
        return honest;
    }

    private static async Task Send(Socket socket, int announced, int sent)
    {
        byte[] bytes = new byte[sent];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)announced);
        await socket.SendAsync(bytes, SocketFlags.None);
    }

    private static async Task WaitFor(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (!condition())
        {
            Assert.That(DateTime.UtcNow, Is.LessThan(deadline), "the condition never came true");
            await Task.Delay(10);
        }
    }

    /// <summary>Passes rents through, remembering the largest array handed out.</summary>
    private sealed class LargestRentPool(System.Buffers.ArrayPool<byte> inner) : System.Buffers.ArrayPool<byte>
    {
        public int Largest { get; private set; }

        public override byte[] Rent(int minimumLength)
        {
            byte[] array = inner.Rent(minimumLength);
            Largest = Math.Max(Largest, array.Length);
            return array;
        }

        public override void Return(byte[] array, bool clearArray = false) => inner.Return(array, clearArray);
    }
}
