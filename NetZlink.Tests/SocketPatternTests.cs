// Every libzmq-passed-through socket pattern over every transport: PAIR, PUB/SUB, XPUB/XSUB,
// DEALER/ROUTER, each over tcp, ipc and inproc.
namespace NetZlink.Tests;

public sealed class SocketPatternTests : ContextTest
{
    private static readonly string[] Transports = ["tcp", "ipc", "inproc"];

    [TestCaseSource(nameof(Transports)), CancelAfter(20_000)]
    public void Pair_ExchangesFramesBothWays(string transport)
    {
        var (server, client) = ConnectedPairs(transport);

        client.Send(Wait.Bytes("ping"));
        Assert.That(Wait.Text(Wait.Frame(server)), Is.EqualTo("ping"));
        server.Send(Wait.Bytes("pong"));
        Assert.That(Wait.Text(Wait.Frame(client)), Is.EqualTo("pong"));
    }

    [TestCaseSource(nameof(Transports)), CancelAfter(20_000)]
    public void PubSub_DeliversOnlySubscribedTopics(string transport)
    {
        var (pub, sub) = Sockets(ZlinkSocketType.Pub, ZlinkSocketType.Sub);
        sub.Subscribe("weather");
        sub.Connect(Endpoints.BindFresh(pub, transport));

        // Subscriptions travel to the publisher asynchronously ("slow joiner"): publish until one lands.
        var buffer = new byte[64];
        int size = 0;
        Wait.Until(() =>
        {
            pub.Send(Wait.Bytes("weather: sun"));
            return sub.TryReceive(buffer, TimeSpan.FromMilliseconds(20), out size);
        }, "the subscription to reach the publisher");
        Assert.That(Wait.Text(buffer[..size]), Is.EqualTo("weather: sun"));

        pub.Send(Wait.Bytes("sports: none"));
        pub.Send(Wait.Bytes("weather: rain"));
        string next;
        do
        {
            next = Wait.Text(Wait.Frame(sub));
        }
        while (next == "weather: sun");
        Assert.That(next, Is.EqualTo("weather: rain"), "the unsubscribed topic must be filtered out");
    }

    [TestCaseSource(nameof(Transports)), CancelAfter(20_000)]
    public void XPubXSub_ForwardSubscriptionsAndMessages(string transport)
    {
        var (xpub, xsub) = Sockets(ZlinkSocketType.XPub, ZlinkSocketType.XSub);
        xsub.Connect(Endpoints.BindFresh(xpub, transport));

        xsub.Send([1, .. Wait.Bytes("t")]);
        Assert.That(Wait.Frame(xpub), Is.EqualTo(new byte[] { 1, (byte)'t' }), "XPUB receives the subscription as a message");

        xpub.Send(Wait.Bytes("t-1"));
        xpub.Send(Wait.Bytes("u-1"));
        xpub.Send(Wait.Bytes("t-2"));
        Assert.That(Wait.Text(Wait.Frame(xsub)), Is.EqualTo("t-1"));
        Assert.That(Wait.Text(Wait.Frame(xsub)), Is.EqualTo("t-2"));
    }

    [TestCaseSource(nameof(Transports)), CancelAfter(20_000)]
    public void DealerRouter_RoutesByRoutingId(string transport)
    {
        var (router, dealer) = Sockets(ZlinkSocketType.Router, ZlinkSocketType.Dealer);
        dealer.RoutingId = new RoutingId(Wait.Bytes("dealer-1"));
        dealer.Connect(Endpoints.BindFresh(router, transport));

        dealer.Send(Wait.Bytes("request"));
        List<byte[]> request = Wait.Message(router);
        Assert.That(request, Has.Count.EqualTo(2));
        Assert.That(Wait.Text(request[0]), Is.EqualTo("dealer-1"));
        Assert.That(Wait.Text(request[1]), Is.EqualTo("request"));

        router.SendMultipart(request[0], Wait.Bytes("reply"));
        Assert.That(Wait.Text(Wait.Frame(dealer)), Is.EqualTo("reply"));
    }

    [Test, CancelAfter(20_000)]
    public void Router_Mandatory_UnknownPeerIsHostUnreachable()
    {
        using var router = Context.CreateSocket(ZlinkSocketType.Router);
        router.SetOption(SocketOption.RouterMandatory, true);
        router.Bind(Endpoints.Inproc());

        var error = Assert.Throws<HostUnreachableException>(() => router.Send(Wait.Bytes("nobody"), SendFlags.SendMore))!;
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EHOSTUNREACH));
    }

    [Test, CancelAfter(20_000)]
    public void UnbindAndDisconnect_Succeed_ThenFailWithEndpointException()
    {
        var (server, client) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        string endpoint = Endpoints.BindFresh(server, "tcp");
        client.Connect(endpoint);

        client.Disconnect(endpoint);
        server.Unbind(endpoint);

        var error = Assert.Throws<EndpointException>(() => server.Unbind(endpoint))!;
        Assert.That(error.Endpoint, Is.EqualTo(endpoint));
        Assert.That(error.Error, Is.EqualTo(ZlinkError.ENOENT));
    }
}
