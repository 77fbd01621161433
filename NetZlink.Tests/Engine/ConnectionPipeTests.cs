// Connections as IDuplexPipe (EngineChannelOptions.ConnectionPipes): protocol code writes to each
// connection's PipeWriter and parses its PipeReader. Every echoed stream must come back exact even
// when the readers are slow (their shard stops reading instead of buffering), and every input must
// complete when the engine stops.
using System.IO.Pipelines;

namespace NetZlink.Tests.Engine;

[RequiresStreamClient]
public sealed class ConnectionPipeTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);
    [Test, CancelAfter(120_000)]
    public async Task PipedConnections_EchoEveryByteExactly_WithSlowReaders_AndCompleteOnStop()
    {
        Random random = Fuzz.Random(out _);
        const int Connections = 8;
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var engine = new ClientEngine(Connections, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]], ShardCount = 2 });
        EngineChannel channel = engine.StartChannel(new EngineChannelOptions { ConnectionPipes = true, PipeCapacity = 4096 });
        int[] seeds = Enumerable.Range(0, Connections).Select(_ => random.Next()).ToArray();
        var conversations = new List<Task<(byte[] Sent, byte[] Received)>>();
        var ends = new List<(int Index, ConnectionEndReason Reason)>();
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync().WithCancellation(Wait.Token))
        {
            Assert.That(e.Kind, Is.Not.EqualTo(EngineEventKind.Packet), "piped packets never come through the reader");
            if (e.Kind == EngineEventKind.Connected)
            {
                Assert.That(e.Pipe, Is.Not.Null);
                IDuplexPipe pipe = e.Pipe!;
                var own = new Random(seeds[e.Connection.Index]);
                conversations.Add(Task.Run(() => Converse(pipe, own)));
                if (conversations.Count == Connections)
                {
                    await Task.WhenAll(conversations).WaitAsync(Patience);
                    _ = engine.StopAsync();
                }
            }
            else if (e.Kind == EngineEventKind.Disconnected)
            {
                ends.Add((e.Connection.Index, e.Reason!.Value));
            }
        }

        foreach (Task<(byte[] Sent, byte[] Received)> conversation in conversations)
        {
            (byte[] sent, byte[] received) = await conversation;
            Assert.That(received, Is.EqualTo(sent));
        }

        TestContext.Out.WriteLine($"pauses: {channel.ReceivePauses}");
        Assert.Multiple(() =>
        {
            Assert.That(ends.Select(x => x.Index), Is.EquivalentTo(Enumerable.Range(0, Connections)), "one end per connection");
            Assert.That(ends.Select(x => x.Reason), Is.All.EqualTo(ConnectionEndReason.EngineStopped));
            Assert.That(channel.ReceivePauses, Is.GreaterThan(0), "slow readers held their shard back");
        });
    }

    /// <summary>Writes random packets and reads their echo slowly; after the stop, reads the input to its end.</summary>
    private static async Task<(byte[] Sent, byte[] Received)> Converse(IDuplexPipe pipe, Random random)
    {
        var sent = new MemoryStream();
        for (int p = 0; p < 60; p++)
        {
            int body = random.Next(1, 3000);
            byte[] packet = new byte[4 + body];
            BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)body);
            random.NextBytes(packet.AsSpan(4));
            sent.Write(packet);
            FlushResult flushed = await pipe.Output.WriteAsync(packet);
            Assert.That(flushed.IsCompleted, Is.False, "the output stays open while the connection is up");
        }

        var received = new MemoryStream();
        while (received.Length < sent.Length)
        {
            // A slow parser: a pause before every read lets the input fill past its capacity.
            await Task.Delay(random.Next(0, 3));
            ReadResult result = await pipe.Input.ReadAsync();
            foreach (ReadOnlyMemory<byte> segment in result.Buffer)
            {
                received.Write(segment.Span);
            }

            pipe.Input.AdvanceTo(result.Buffer.End);
            Assert.That(result.IsCompleted, Is.False, "the input ended early");
        }

        return (sent.ToArray(), received.ToArray());
    }
    [Test, CancelAfter(60_000)]
    public async Task APipedInput_CompletesWhenTheEngineStops()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var engine = new ClientEngine(1, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]] });
        EngineChannel channel = engine.StartChannel(new EngineChannelOptions { ConnectionPipes = true });
        Assert.That(await channel.Reader.WaitToReadAsync(Wait.Token), Is.True);
        Assert.That(channel.Reader.TryRead(out EngineEvent connected), Is.True);
        IDuplexPipe pipe = connected.Pipe!;
        await engine.StopAsync().WaitAsync(Patience);

        ReadResult end = await pipe.Input.ReadAsync().AsTask().WaitAsync(Patience);
        Assert.That(end.IsCompleted, Is.True);
        Assert.That(end.Buffer.Length, Is.Zero);
        pipe.Input.AdvanceTo(end.Buffer.End);
        var deadline = DateTime.UtcNow + Patience;
        while (!(await pipe.Output.WriteAsync(new byte[] { 0, 0, 0, 1, 9 })).IsCompleted)
        {
            Assert.That(DateTime.UtcNow, Is.LessThan(deadline), "the output never reported the end");
            await Task.Delay(10);
        }

        var rest = new List<EngineEventKind>();
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync().WithCancellation(Wait.Token))
        {
            rest.Add(e.Kind);
        }

        Assert.That(rest, Is.EqualTo(new[] { EngineEventKind.Disconnected }), "the reader ends after the connection's end");
    }
}
