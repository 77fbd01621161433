// Failed calls raise typed exceptions that carry the errno, its name and the operation with
// its endpoint or option.
namespace NetZlink.Tests;

public sealed class ErrorTests : ContextTest
{
    [Test, CancelAfter(10_000)]
    public void Bind_BadPort_ThrowsEndpointExceptionWithErrnoAndEndpoint()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        const string endpoint = "tcp://127.0.0.1:no-port";

        var error = Assert.Throws<EndpointException>(() => socket.Bind(endpoint))!;
        Assert.Multiple(() =>
        {
            Assert.That(error.Errno, Is.EqualTo(22));
            Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL));
            Assert.That(error.ErrorName, Is.EqualTo("EINVAL"));
            Assert.That(error.Endpoint, Is.EqualTo(endpoint));
            Assert.That(error.Operation, Is.EqualTo($"Bind(\"{endpoint}\")"));
            Assert.That(error.Message, Is.EqualTo($"Bind(\"{endpoint}\") failed: EINVAL (22): Invalid argument"));
        });
        TestContext.Out.WriteLine(error.Message);
    }

    [Test, CancelAfter(10_000)]
    public void Connect_UnknownTransport_ThrowsEndpointExceptionWithEprotonosupport()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);

        var error = Assert.Throws<EndpointException>(() => socket.Connect("carrier-pigeon://coop"))!;
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EPROTONOSUPPORT));
        Assert.That(error.Message, Does.Contain("Connect(\"carrier-pigeon://coop\") failed: EPROTONOSUPPORT"));
    }

    [Test, CancelAfter(10_000)]
    public void Bind_AddressInUse_ThrowsEaddrinuse()
    {
        var (first, second) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        string endpoint = Endpoints.BindFresh(first, "tcp");

        var error = Assert.Throws<EndpointException>(() => second.Bind(endpoint))!;
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EADDRINUSE));
    }

    [Test, CancelAfter(10_000)]
    public void SetOption_UnknownOption_ThrowsSocketOptionExceptionNamingIt()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);

        var error = Assert.Throws<SocketOptionException>(() => socket.SetOption((SocketOption)9999, 1))!;
        Assert.Multiple(() =>
        {
            Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL));
            Assert.That(error.Option, Is.EqualTo("9999"));
            Assert.That(error.Message, Does.StartWith("SetOption(9999) failed: EINVAL (22): "));
        });

        var getError = Assert.Throws<SocketOptionException>(() => socket.GetOptionInt32((SocketOption)9999))!;
        Assert.That(getError.Message, Does.StartWith("GetOption(9999) failed: EINVAL"));
    }

    [Test, CancelAfter(10_000)]
    public void SetOption_WrongValueSize_NamesTheOption()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);

        var error = Assert.Throws<SocketOptionException>(() => socket.SetOption(SocketOption.MaxMessageSize, 5))!;
        Assert.That(error.Option, Is.EqualTo(nameof(SocketOption.MaxMessageSize)));
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL));
    }

    [Test, CancelAfter(10_000)]
    public void CreateSocket_UnknownType_Throws()
    {
        var error = Assert.Throws<ZlinkException>(() => Context.CreateSocket((ZlinkSocketType)99))!;
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL));
        Assert.That(error.Operation, Is.EqualTo("CreateSocket(99)"));
    }

    [Test, CancelAfter(10_000)]
    public void AfterShutdown_CallsThrowContextTerminated()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        socket.Bind(Endpoints.Inproc());

        Context.Shutdown();

        var receive = Assert.Throws<ContextTerminatedException>(() => socket.Receive(new byte[16]))!;
        Assert.That(receive.Error, Is.EqualTo(ZlinkError.ETERM));
        Assert.That(receive.Errno, Is.EqualTo(156384712 + 53));
        Assert.That(receive.Message, Does.StartWith("Receive failed: ETERM"));
        Assert.Throws<ContextTerminatedException>(() => socket.TryReceive(new byte[16], out _));
        Assert.Throws<ContextTerminatedException>(() => socket.TrySend(new byte[1]));
        Assert.Throws<ContextTerminatedException>(() => Context.CreateSocket(ZlinkSocketType.Pair));
    }

    [Test, CancelAfter(10_000)]
    public void PeerIntrospection_OnPair_ListsItsConnection()
    {
        var (server, client) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        Assert.That(server.PeerCount, Is.Zero);
        var unknown = Assert.Throws(Is.InstanceOf<ZlinkException>(), () => server.GetPeerRoutingId(0)) as ZlinkException;
        Assert.That(unknown!.Error, Is.EqualTo(ZlinkError.EINVAL));

        client.Connect(Endpoints.BindFresh(server, "tcp"));
        while (server.PeerCount == 0)
        {
            Thread.Sleep(2);
        }

        Assert.That(server.GetPeers(), Has.Count.EqualTo(1));
    }

    [Test]
    public void ErrorName_OfAnUnknownErrno_IsTheNumber()
    {
        var error = new ZlinkException(12345, "Op", "text");
        Assert.That(error.ErrorName, Is.EqualTo("errno 12345"));
        Assert.That(error.Message, Is.EqualTo("Op failed: errno 12345 (12345): text"));
    }
}
