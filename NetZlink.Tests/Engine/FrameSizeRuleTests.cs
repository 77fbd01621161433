// One frame-size rule (docs/engine.md, "Frame sizes"): every way of sending takes every packet
// the engine accepts, up to MaxPacketSize; the capacities bound what is held, never the size of
// one frame. The loops of the docs (the echo server of engine.md, the client loops of README.md
// and engine.md, which write with WriteAsync, and an echo through connection pipes) are run here
// against packets from one byte of body to MaxPacketSize, over tcp and ws, and every echo must
// come back byte for byte. WriteAsync used to throw ArgumentOutOfRangeException for a frame over
// SendQueueCapacityPerConnection (4 MiB), which ended the docs' echo loop at the first such packet.
using System.IO.Pipelines;

namespace NetZlink.Tests.Engine;

public sealed class FrameSizeRuleTests : EngineFixture
{
    private const int MaxPacket = 16 * 1024 * 1024;
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    [RequiresStreamClient]
    [TestCase("tcp", false)]
    [TestCase("ws", false)]
    [TestCase("tcp", true)]
    [TestCase("ws", true)]
    [CancelAfter(120_000)]
    public async Task TheDocsLoops_EchoEveryPacketSizeTheEngineAccepts(string transport, bool pipes)
    {
        Random random = Fuzz.Random(out _);
        var defaults = new EngineOptions();
        Assert.That(defaults.MaxPacketSize, Is.EqualTo(MaxPacket), "the sizes below are about the defaults");
        int[] packetSizes =
        [
            LengthPrefixFramer.Size + 1,
            defaults.ReceiveChunkSize + 1,
            defaults.SendQueueCapacityPerConnection + 1,
            MaxPacket,
            random.Next(LengthPrefixFramer.Size + 1, MaxPacket + 1),
            random.Next(LengthPrefixFramer.Size + 1, MaxPacket + 1),
        ];
        TestContext.Out.WriteLine($"{transport}, {(pipes ? "pipe" : "channel")} echo: packets of {string.Join(", ", packetSizes)} bytes");
        byte[][] packets = packetSizes.Select(size => Packet(random, size)).ToArray();

        await using var server = new ServerEngine(new EngineOptions { Endpoints = [$"{transport}://127.0.0.1:*"] });
        EngineChannel serverChannel = server.StartChannel(new EngineChannelOptions { ConnectionPipes = pipes });
        Task echo = pipes ? PipeEcho(serverChannel) : ChannelEcho(serverChannel);

        await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [server.BoundEndpoints[0]] });
        EngineChannel channel = client.StartChannel();
        int echoed = 0;
        var ends = new List<ConnectionEndReason>();
        using var patience = new CancellationTokenSource(Patience);
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync(patience.Token))
        {
            using (e)
            {
                switch (e.Kind)
                {
                    case EngineEventKind.Connected:
                        foreach (byte[] packet in packets)
                        {
                            Assert.That(await channel.SendAsync(e.Connection, packet), Is.True, $"SendAsync of a {packet.Length}-byte packet");
                        }

                        break;
                    case EngineEventKind.Packet:
                        Assert.That(echoed, Is.LessThan(packets.Length), "no more echoes than packets");
                        Assert.That(e.Packet.Length, Is.EqualTo(packets[echoed].Length), $"echo {echoed}'s size");
                        Assert.That(e.Packet.SequenceEqual(packets[echoed]), Is.True, $"echo {echoed} ({packets[echoed].Length} bytes) byte for byte");
                        if (++echoed == packets.Length)
                        {
                            await client.StopAsync();
                        }

                        break;
                    case EngineEventKind.ConnectFailed:
                        Assert.Fail($"could not connect: {e.Failure}");
                        break;
                    case EngineEventKind.Disconnected:
                        ends.Add(e.Reason!.Value);
                        break;
                }
            }
        }

        await server.StopAsync();
        await echo.WaitAsync(Patience);
        Assert.Multiple(() =>
        {
            Assert.That(echoed, Is.EqualTo(packets.Length), "every packet echoed");
            Assert.That(ends, Is.EqualTo(new[] { ConnectionEndReason.EngineStopped }), "the connection lived until the client stopped");
            Assert.That(server.Fault, Is.Null);
            Assert.That(client.Fault, Is.Null);
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public async Task AFrameLargerThanThePostingCapacity_IsTakenWhenTheConnectionHoldsNoOtherPost()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        var options = new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]], SendQueueCapacityPerConnection = 1024, SendQueueCapacityPerShard = 2048 };
        await using var client = new ClientEngine(1, options);
        EngineChannel channel = client.StartChannel();
        byte[] big = Packet(new Random(1), 64 * 1024);
        int echoes = 0;
        using var patience = new CancellationTokenSource(Patience);
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync(patience.Token))
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Connected)
                {
                    // 64 times each capacity: taken whole (it used to be ArgumentOutOfRangeException).
                    Assert.That(channel.TrySend(e.Connection, big), Is.True, "TrySend of a frame larger than both capacities, nothing else held");
                    Assert.That(await channel.SendAsync(e.Connection, big), Is.True, "SendAsync waits until the first has gone, then takes it");
                }
                else if (e.Kind == EngineEventKind.Packet)
                {
                    Assert.That(e.Packet.SequenceEqual(big), Is.True);
                    if (++echoes == 2)
                    {
                        await client.StopAsync();
                    }
                }
            }
        }

        Assert.That(echoes, Is.EqualTo(2));
        SendQueueCounters posts = client.ReadSendQueueCounters();
        Assert.That((posts.Accepted, posts.Sent, posts.BytesHeld), Is.EqualTo((2L, 2L, 0L)));
    }

    /// <summary>docs/engine.md's echo server loop, as printed there.</summary>
    private static Task ChannelEcho(EngineChannel serverChannel) => Task.Run(async () =>
    {
        await foreach (EngineEvent e in serverChannel.Reader.ReadAllAsync())
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Packet)
                {
                    await serverChannel.SendAsync(e.Connection, e.PacketMemory);
                }
            }
        }
    });

    /// <summary>An echo through connection pipes: each connection's input copied to its output, in whatever pieces it comes.</summary>
    private static Task PipeEcho(EngineChannel serverChannel) => Task.Run(async () =>
    {
        var copies = new List<Task>();
        await foreach (EngineEvent e in serverChannel.Reader.ReadAllAsync())
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Connected)
                {
                    IDuplexPipe pipe = e.Pipe!;
                    copies.Add(Task.Run(() => CopyInPieces(pipe)));
                }
            }
        }

        await Task.WhenAll(copies);
    });

    /// <summary>
    /// Input to output, flushed every 16 KiB (a quarter of the default PipeCapacity): a writer that
    /// flushes as it goes, so a large packet is never in the output pipe whole.
    /// </summary>
    private static async Task CopyInPieces(IDuplexPipe pipe)
    {
        const int Piece = 16 * 1024;
        while (true)
        {
            ReadResult read = await pipe.Input.ReadAsync();
            foreach (ReadOnlyMemory<byte> segment in read.Buffer)
            {
                for (int at = 0; at < segment.Length; at += Piece)
                {
                    await pipe.Output.WriteAsync(segment.Slice(at, Math.Min(Piece, segment.Length - at)));
                }
            }

            pipe.Input.AdvanceTo(read.Buffer.End);
            if (read.IsCompleted)
            {
                break;
            }
        }

        await pipe.Output.CompleteAsync();
    }

    private static byte[] Packet(Random random, int size)
    {
        byte[] packet = Fuzz.Bytes(random, size);
        BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)(size - LengthPrefixFramer.Size));
        return packet;
    }
}
