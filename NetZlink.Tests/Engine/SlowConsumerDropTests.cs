// EngineShard.DropSlowConsumer: a server engine that queues megabytes for a ws:// client that does
// not read, and then drops it, gives that client whole messages (each one the server sent, in
// order) and then a WebSocket close frame with the code asked for and the reason "slow consumer",
// never a reset; the handler sees SlowConsumer. Over tcp:// the client sees an end after a prefix
// of the bytes sent. Message sizes are random (seed printed, NETZLINK_FUZZ_SEED replays it).
using System.Net.WebSockets;

namespace NetZlink.Tests.Engine;

public sealed class SlowConsumerDropTests : EngineFixture
{
    [Test, CancelAfter(120_000)]
    public async Task AWebSocketClientThatDoesNotRead_IsDroppedWithACloseFrame([Values((ushort)1008, (ushort)4000)] ushort code)
    {
        if (!ZlinkLibrary.Has("ws"))
        {
            Assert.Ignore("this native library has no ws:// (zlink_has(\"ws\") is 0)");
        }

        NativeNeeds.RequireStreamFraming();
        var handler = new FloodThenDrop(Fuzz.Random(out _), code);
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["ws://127.0.0.1:*"], Framer = RawStreamFramer.Instance, SendBufferSize = 4096 });
        server.Start(_ => handler);

        using var client = new ClientWebSocket();
        await client.ConnectAsync(new Uri(server.BoundEndpoints[0]), Wait.Token);
        Wait.Until(() => handler.Dropped, "the handler dropped the connection");

        (int whole, WebSocketCloseStatus? status, string? reason) = await WebSocketDropTests.ReadAll(client, handler.Sent);
        TestContext.Out.WriteLine($"{whole} of {handler.Sent.Count} messages arrived whole, then close {status} '{reason}'");
        Assert.Multiple(() =>
        {
            Assert.That(whole, Is.LessThan(handler.Sent.Count), "what was queued was dropped");
            Assert.That((int?)status, Is.EqualTo((int)code), "the close code asked for");
            Assert.That(reason, Is.EqualTo("slow consumer"));
            Assert.That(handler.EndReason, Is.EqualTo(ConnectionEndReason.SlowConsumer));
        });
    }

    [Test, CancelAfter(120_000)]
    public void ATcpClientThatDoesNotRead_GetsAPrefixThenAnEnd()
    {
        NativeNeeds.RequireStreamFraming();
        var handler = new FloodThenDrop(Fuzz.Random(out _), 1008);
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], Framer = RawStreamFramer.Instance, SendBufferSize = 4096 });
        server.Start(_ => handler);

        var endpoint = new Uri(server.BoundEndpoints[0].Replace("tcp://", "http://", StringComparison.Ordinal));
        using var client = new TcpClient();
        client.ReceiveBufferSize = 4096;
        client.Connect(endpoint.Host, endpoint.Port);
        Wait.Until(() => handler.Dropped, "the handler dropped the connection");

        byte[] expected = handler.Sent.SelectMany(b => b).ToArray();
        var buffer = new byte[64 * 1024];
        long have = 0;
        NetworkStream stream = client.GetStream();
        stream.ReadTimeout = 30_000;
        for (int n; (n = ReadOrReset(stream, buffer)) > 0; have += n)
        {
            Assert.That(buffer.AsSpan(0, n).SequenceEqual(expected.AsSpan((int)have, n)), Is.True, $"bytes from {have} are the ones sent");
        }

        Assert.Multiple(() =>
        {
            Assert.That(have, Is.LessThan(expected.Length), "what was queued was dropped");
            Assert.That(handler.EndReason, Is.EqualTo(ConnectionEndReason.SlowConsumer));
        });
    }

    [Test]
    public void ACloseCodeAnEndpointMayNotSend_IsRefused()
    {
        NativeNeeds.RequireStreamFraming();
        var handler = new FloodThenDrop(new Random(1), 1005);
        using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], Framer = RawStreamFramer.Instance });
        server.Start(_ => handler);
        using var client = new TcpClient("127.0.0.1", new Uri(server.BoundEndpoints[0].Replace("tcp://", "http://", StringComparison.Ordinal)).Port);
        Wait.Until(() => handler.Refusal is not null, "the drop was refused");
        Assert.That(handler.Refusal, Is.InstanceOf<ArgumentOutOfRangeException>());
        Assert.That(handler.Refusal!.Message, Does.Contain("1000-1003, 1007-1014 or 3000-4999"));
    }

    private static int ReadOrReset(NetworkStream stream, byte[] buffer)
    {
        try
        {
            return stream.Read(buffer);
        }
        catch (IOException e)
        {
            Assert.Fail($"the connection ended with an error, not an orderly end: {e.Message}");
            return 0;
        }
    }

    /// <summary>On connect: sends random payloads until the engine says Full (or 32 MiB), then drops the connection.</summary>
    private sealed class FloodThenDrop(Random random, ushort code) : IConnectionHandler
    {
        private volatile bool _dropped;

        public List<byte[]> Sent { get; } = new();

        public bool Dropped => _dropped;

        public ConnectionEndReason? EndReason { get; private set; }

        public Exception? Refusal { get; private set; }

        public void OnConnected(EngineShard shard, Connection connection)
        {
            long total = 0;
            while (total < 32L << 20)
            {
                var payload = new byte[1 + random.Next(256 * 1024)];
                random.NextBytes(payload);
                SendResult result = shard.Send(connection, payload);
                if (result is not (SendResult.Sent or SendResult.Queued))
                {
                    break;
                }

                Sent.Add(payload);
                total += payload.Length;
            }

            try
            {
                shard.DropSlowConsumer(connection, code);
            }
            catch (ArgumentOutOfRangeException e)
            {
                Refusal = e;
                shard.Close(connection);
            }

            _dropped = true;
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes) => EndReason = reason;

        public void OnPass(EngineShard shard)
        {
        }
    }
}
