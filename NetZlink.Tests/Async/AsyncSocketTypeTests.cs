// Every socket type through the async API: single frames, messages and multipart messages go
// through intact, over inproc, ipc and tcp, whether the operation completes at once (the
// message was there) or waits for the reactor (it was not yet).
using System.Text;

namespace NetZlink.Tests.Async;

[CancelAfter(60_000)]
public sealed class AsyncSocketTypeTests : ContextTest
{
    [TestCase("inproc"), TestCase("ipc"), TestCase("tcp")]
    public async Task Pair_ReceiveAsyncWaits_ThenGetsTheFrame_AndSendAsyncAnswers(string transport)
    {
        var (server, client) = ConnectedPairs(transport);
        byte[] buffer = new byte[64];
        ValueTask<int> receiving = server.ReceiveAsync(buffer);
        Assert.That(receiving.IsCompleted, Is.False, "nothing was sent yet, so the receive must wait");

        await AsyncTestSupport.Within(client.SendAsync("ping"u8.ToArray()), "SendAsync");
        int size = await AsyncTestSupport.Within(receiving, "ReceiveAsync");
        Assert.That(Encoding.ASCII.GetString(buffer, 0, size), Is.EqualTo("ping"));

        await AsyncTestSupport.Within(server.SendAsync("pong"u8.ToArray()), "SendAsync back");
        size = await AsyncTestSupport.Within(client.ReceiveAsync(buffer), "ReceiveAsync back");
        Assert.That(Encoding.ASCII.GetString(buffer, 0, size), Is.EqualTo("pong"));
    }

    [Test]
    public async Task DealerRouter_MultipartAsync_CarriesTheRoutingIdBothWays()
    {
        (ZlinkSocket router, ZlinkSocket dealer) = AsyncTestSupport.Pair(Context, "tcp", ZlinkSocketType.Dealer, ZlinkSocketType.Router);
        using (router)
        using (dealer)
        {
            ValueTask<List<byte[]>> atRouter = router.ReceiveMultipartAsync();
            await AsyncTestSupport.Within(dealer.SendMultipartAsync(new ReadOnlyMemory<byte>[] { "a"u8.ToArray(), "bc"u8.ToArray() }), "DEALER SendMultipartAsync");
            List<byte[]> request = await AsyncTestSupport.Within(atRouter, "ROUTER ReceiveMultipartAsync");
            Assert.That(request, Has.Count.EqualTo(3), "[dealer id][a][bc]");
            Assert.That(request[1], Is.EqualTo("a"u8.ToArray()));
            Assert.That(request[2], Is.EqualTo("bc"u8.ToArray()));

            await AsyncTestSupport.Within(router.SendMultipartAsync(new ReadOnlyMemory<byte>[] { request[0], "reply"u8.ToArray() }), "ROUTER SendMultipartAsync");
            List<byte[]> reply = await AsyncTestSupport.Within(dealer.ReceiveMultipartAsync(), "DEALER ReceiveMultipartAsync");
            Assert.That(reply, Has.Count.EqualTo(1));
            Assert.That(reply[0], Is.EqualTo("reply"u8.ToArray()));
        }
    }

    [TestCase(ZlinkSocketType.Pub, ZlinkSocketType.Sub), TestCase(ZlinkSocketType.XPub, ZlinkSocketType.XSub)]
    public async Task PublishSubscribe_ReceiveAsync_GetsPublishedMessages(ZlinkSocketType publisherType, ZlinkSocketType subscriberType)
    {
        using ZlinkSocket publisher = Context.CreateSocket(publisherType);
        using ZlinkSocket subscriber = Context.CreateSocket(subscriberType);
        string endpoint = Endpoints.BindFresh(publisher, "tcp");
        subscriber.Connect(endpoint);
        if (subscriberType == ZlinkSocketType.Sub)
        {
            subscriber.Subscribe(""u8);
        }
        else
        {
            await AsyncTestSupport.Within(subscriber.SendAsync(new byte[] { 1 }), "XSUB subscription");
        }

        if (publisherType == ZlinkSocketType.XPub)
        {
            byte[] subscription = new byte[8];
            int size = await AsyncTestSupport.Within(publisher.ReceiveAsync(subscription), "XPUB receives the subscription");
            Assert.That(subscription[..size], Is.EqualTo(new byte[] { 1 }));
        }

        // The subscription travels to the publisher in the background: publish until one arrives.
        byte[] buffer = new byte[16];
        ValueTask<int> receiving = subscriber.ReceiveAsync(buffer);
        for (int i = 0; i < 500 && !receiving.IsCompleted; i++)
        {
            await publisher.SendAsync("news"u8.ToArray());
            await Task.Delay(10);
        }

        int received = await AsyncTestSupport.Within(receiving, "SUB ReceiveAsync");
        Assert.That(buffer[..received], Is.EqualTo("news"u8.ToArray()));
    }

    [Test]
    public async Task Stream_AsyncMultipart_ConnectsAndEchoes()
    {
        using ZlinkSocket server = Context.CreateSocket(ZlinkSocketType.Stream);
        using ZlinkSocket client = Context.CreateSocket(ZlinkSocketType.Stream);
        StreamSockets.ConnectOrIgnore(client, StreamSockets.Bind(server));

        // STREAM sockets make progress only inside calls: each side waits on its own descriptor.
        ValueTask<List<byte[]>> serverEvent = server.ReceiveMultipartAsync();
        List<byte[]> connected = await AsyncTestSupport.Within(client.ReceiveMultipartAsync(), "client connect event");
        Assert.That(connected[1], Is.EqualTo(new[] { StreamSockets.Connected }));
        List<byte[]> accepted = await AsyncTestSupport.Within(serverEvent, "server accept event");
        Assert.That(accepted[1], Is.EqualTo(new[] { StreamSockets.Connected }));

        byte[] payload = Encoding.ASCII.GetBytes("stream payload");
        await AsyncTestSupport.Within(client.SendMultipartAsync(new ReadOnlyMemory<byte>[] { connected[0], payload }), "client SendMultipartAsync");
        var got = new List<byte>();
        while (got.Count < payload.Length)
        {
            List<byte[]> message = await AsyncTestSupport.Within(server.ReceiveMultipartAsync(), "server ReceiveMultipartAsync");
            Assert.That(message[0], Is.EqualTo(accepted[0]), "the same connection");
            got.AddRange(message[1]);
        }

        Assert.That(got.ToArray(), Is.EqualTo(payload));
    }

    [Test]
    public async Task MessageOverloads_SendWithoutCopy_AndReceiveIntoAMessage()
    {
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.Pair(Context, "tcp");
        using (server)
        using (client)
        using (var received = new ZlinkMessage())
        using (var first = new ZlinkMessage("one"u8))
        using (var second = new ZlinkMessage("two"u8))
        {
            ValueTask receiving = server.ReceiveAsync(received);
            await AsyncTestSupport.Within(client.SendAsync(first, SendFlags.SendMore), "SendAsync(ZlinkMessage, SendMore)");
            await AsyncTestSupport.Within(client.SendAsync(second), "SendAsync(ZlinkMessage)");
            Assert.That(first.Size, Is.Zero, "a sent message is left empty");

            await AsyncTestSupport.Within(receiving, "ReceiveAsync(ZlinkMessage)");
            Assert.That(received.ToArray(), Is.EqualTo("one"u8.ToArray()));
            Assert.That(received.More, Is.True);
            await AsyncTestSupport.Within(server.ReceiveAsync(received), "second frame");
            Assert.That(received.ToArray(), Is.EqualTo("two"u8.ToArray()));
            Assert.That(received.More, Is.False);
        }
    }

    [Test]
    public async Task SendAsync_WaitsAtTheHighWaterMark_AndCompletesWhenThePeerReads()
    {
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.TightPair(Context);
        using (server)
        using (client)
        {
            (int sent, ValueTask pending) = await AsyncTestSupport.FillUntilSendWaits(client);
            byte[] buffer = new byte[4];
            for (int i = 0; i <= sent; i++)
            {
                int size = await AsyncTestSupport.Within(server.ReceiveAsync(buffer), $"receive {i}");
                Assert.That(buffer[0], Is.EqualTo((byte)i), "in order, none lost");
                Assert.That(size, Is.EqualTo(1));
            }

            await AsyncTestSupport.Within(pending, "the send that waited");
        }
    }
}
