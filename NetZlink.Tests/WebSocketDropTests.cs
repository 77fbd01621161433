// ZLINK_STREAM_DROP seen through the binding with .NET's own ClientWebSocket as the peer: a ws://
// client that stops reading while the server queues megabytes is dropped; when it reads again it
// gets whole messages (each a payload the server sent, in order, none cut), then a close frame
// with 1008 (policy violation) and the reason "slow consumer", and an orderly end (no reset); the
// server's disconnect event carries ENOBUFS. Message sizes are random (seed printed,
// NETZLINK_FUZZ_SEED replays it).
using System.Net.WebSockets;

namespace NetZlink.Tests;

public sealed class WebSocketDropTests : ContextTest
{
    [Test]
    [CancelAfter(120_000)]
    public async Task ASlowWebSocketConsumer_IsDroppedWithAClose_NotAReset()
    {
        if (!ZlinkLibrary.Has("ws"))
        {
            Assert.Ignore("this native library has no ws:// (zlink_has(\"ws\") is 0)");
        }

        NativeNeeds.RequireStreamFraming(); // ZLINK_STREAM_DROP is NetZlink's, like RAW framing
        Random random = Fuzz.Random(out _);

        using ZlinkSocket server = Context.CreateSocket(ZlinkSocketType.Stream);
        StreamSockets.UseFraming(server, StreamFraming.Raw);
        server.SendHighWaterMark = 0;
        server.SendBufferSize = 4096;
        server.Linger = 0;
        server.Bind("ws://127.0.0.1:*");
        string endpoint = server.LastEndpoint;

        using var client = new ClientWebSocket();
        Task connecting = client.ConnectAsync(new Uri(endpoint), Wait.Token);
        RoutingId id = StreamSockets.ReceiveEvent(server, StreamSockets.Connected);
        await connecting;

        // far more than the kernel buffers of both sides hold, while the client does not read
        var sent = new List<byte[]>();
        long total = 0;
        while (total < 24L << 20)
        {
            var payload = new byte[1 + random.Next(256 * 1024)];
            random.NextBytes(payload);
            StreamSockets.Send(server, id, payload);
            sent.Add(payload);
            total += payload.Length;
        }

        server.SetOption((SocketOption)ZlinkConstants.ZLINK_STREAM_DROP, id.Span);

        // the client reads now, while the server's socket is driven
        Task<(int Whole, WebSocketCloseStatus? Status, string? Reason)> reading = Task.Run(() => ReadAll(client, sent));
        bool disconnected = false;
        ZlinkError cause = 0;
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while (!disconnected && DateTime.UtcNow < deadline)
        {
            using var frame = new ZlinkMessage();
            if (!server.TryReceive(frame, TimeSpan.FromMilliseconds(50)))
            {
                continue;
            }

            using var payload = new ZlinkMessage();
            Assert.That(server.TryReceive(payload, Wait.Long), Is.True);
            if (payload.Size == 0 && server.StreamEvent == StreamEventKind.Disconnected)
            {
                disconnected = true;
                cause = server.StreamEventError;
            }
        }

        (int whole, WebSocketCloseStatus? status, string? reason) = await reading;
        TestContext.Out.WriteLine($"{whole} of {sent.Count} messages arrived whole, then close {status} '{reason}'");
        Assert.That(whole, Is.LessThan(sent.Count), "the queue was dropped");
        Assert.That(status, Is.EqualTo(WebSocketCloseStatus.PolicyViolation));
        Assert.That(reason, Is.EqualTo("slow consumer"));
        Assert.That(disconnected, Is.True, "the server's disconnect event");
        Assert.That(cause, Is.EqualTo(ZlinkError.ENOBUFS), "the disconnect's cause");
    }

    /// <summary>
    /// Reads messages until the close frame: each must be the next payload the server sent, whole;
    /// then answers the close and ends. A reset (WebSocketException) fails the test.
    /// </summary>
    internal static async Task<(int Whole, WebSocketCloseStatus? Status, string? Reason)> ReadAll(ClientWebSocket client, List<byte[]> sent)
    {
        var buffer = new byte[512 * 1024];
        int whole = 0;
        for (;;)
        {
            int have = 0;
            WebSocketReceiveResult result;
            do
            {
                result = await client.ReceiveAsync(new ArraySegment<byte>(buffer, have, buffer.Length - have), Wait.Token);
                have += result.Count;
            }
            while (!result.EndOfMessage && result.MessageType != WebSocketMessageType.Close);

            if (result.MessageType == WebSocketMessageType.Close)
            {
                Assert.That(have, Is.Zero, "the close frame does not cut a message");
                await client.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, Wait.Token);
                return (whole, result.CloseStatus, result.CloseStatusDescription);
            }

            Assert.That(whole, Is.LessThan(sent.Count), "no more messages than were sent");
            Assert.That(buffer.AsSpan(0, have).SequenceEqual(sent[whole]), Is.True, $"message {whole} arrives whole and unchanged");
            whole++;
        }
    }
}
