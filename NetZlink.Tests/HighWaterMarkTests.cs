// High-water marks: TrySend reports "would block" as false, never as an exception, and
// succeeds again once the peer drains. On STREAM, a refused payload leaves the id frame
// pending, so only the payload is retried.
namespace NetZlink.Tests;

public sealed class HighWaterMarkTests : ContextTest
{
    [Test, CancelAfter(30_000)]
    public void TrySend_AtTheHighWaterMark_ReturnsFalse_ThenTrueOnceDrained()
    {
        var (receiver, sender) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        sender.SendHighWaterMark = 10;
        receiver.ReceiveHighWaterMark = 10;
        sender.Connect(Endpoints.BindFresh(receiver, "inproc"));

        byte[] frame = new byte[100];
        int sent = 0;
        while (sent < 100_000 && sender.TrySend(frame))
        {
            sent++;
        }

        TestContext.Out.WriteLine($"queued {sent} frames before the high-water mark");
        Assert.That(sent, Is.InRange(1, 99_999), "TrySend must eventually report would-block");
        Assert.That(sender.TrySend(frame), Is.False);
        Assert.That(sender.TrySend(frame, TimeSpan.FromMilliseconds(50)), Is.False, "the timed TrySend also reports it as a result");

        byte[] buffer = new byte[100];
        for (int i = 0; i < sent; i++)
        {
            Assert.That(receiver.TryReceive(buffer, Wait.Long, out _), Is.True);
        }

        Assert.That(sender.TrySend(frame, Wait.Long), Is.True);
    }

    [Test, CancelAfter(60_000)]
    public void Stream_PayloadRefusedAtTheHighWaterMark_LeavesNothingSelected_AndTheWholeMessageIsRetried()
    {
        using var server = Context.CreateSocket(ZlinkSocketType.Stream);
        server.SendHighWaterMark = 4;
        server.SendBufferSize = 16 * 1024;
        var endpoint = new Uri(StreamSockets.Bind(server));

        using var client = new TcpClient { ReceiveBufferSize = 16 * 1024 };
        client.Connect(endpoint.Host, endpoint.Port);
        RoutingId id = StreamSockets.ReceiveEvent(server, StreamSockets.Connected);

        // Nobody reads on the client: the kernel buffers fill, then the connection's queue.
        byte[] payload = new byte[64 * 1024];
        int sent = 0;
        bool refused = false;
        while (sent < 10_000)
        {
            Assert.That(server.TrySend(id.Span, SendFlags.SendMore), Is.True, "the id frame is always accepted");
            if (!server.TrySend(payload))
            {
                refused = true;
                break;
            }

            sent++;
        }

        TestContext.Out.WriteLine($"STREAM accepted {sent} payloads of {payload.Length} bytes before EAGAIN");
        Assert.That(refused, Is.True, "the payload send must report would-block at SNDHWM");

        // Nothing stays selected after the refusal: a payload alone is now an id frame without
        // SendMore, refused with EINVAL, and the stream is untouched.
        Assert.That(() => server.TrySend(payload), Throws.InstanceOf<ZlinkException>().With.Message.Contain("EINVAL"));

        // Drain the client in the background; retry the whole [id][payload] message.
        long expected = (long)(sent + 1) * payload.Length;
        var reader = Task.Run(() =>
        {
            byte[] buffer = new byte[256 * 1024];
            long total = 0;
            NetworkStream stream = client.GetStream();
            while (total < expected)
            {
                int n = stream.Read(buffer);
                if (n == 0)
                {
                    break;
                }

                total += n;
            }

            return total;
        });

        Assert.That(server.TrySendTo(id, payload, Wait.Long), Is.True, "the retried message goes once the peer drains");
        var flushDeadline = DateTime.UtcNow.AddSeconds(20);
        while (!reader.IsCompleted && DateTime.UtcNow < flushDeadline)
        {
            // A STREAM socket makes progress inside calls made on it.
            server.TryReceive(new byte[64], TimeSpan.FromMilliseconds(10), out _);
        }

        Assert.That(reader.Wait(Wait.Long), Is.True, "the client received everything");
        Assert.That(reader.Result, Is.GreaterThanOrEqualTo(expected));
    }
}
