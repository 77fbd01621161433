// The poller waits on several sockets and raw descriptors and reports each item's events.
namespace NetZlink.Tests;

public sealed class PollerTests : ContextTest
{
    [Test, CancelAfter(20_000)]
    public void Poll_ReportsOnlyTheReadySocket()
    {
        var (a1, a2) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        var (b1, b2) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        a2.Connect(Endpoints.BindFresh(a1, "inproc"));
        b2.Connect(Endpoints.BindFresh(b1, "tcp"));

        var poller = new ZlinkPoller();
        int a = poller.Add(a1, PollEvents.PollIn);
        int b = poller.Add(b1, PollEvents.PollIn);
        Assert.That(poller.Count, Is.EqualTo(2));
        Assert.That(poller.Poll(TimeSpan.Zero), Is.Zero);

        b2.Send(Wait.Bytes("to b"));
        Assert.That(poller.Poll(Wait.Long), Is.EqualTo(1));
        Assert.That(poller.GetReturnedEvents(a), Is.EqualTo(PollEvents.None));
        Assert.That(poller.GetReturnedEvents(b), Is.EqualTo(PollEvents.PollIn));
        Assert.That(poller.GetSocket(b), Is.SameAs(b1));
        Assert.That(Wait.Text(Wait.Frame(b1)), Is.EqualTo("to b"));

        poller.SetEvents(a, PollEvents.PollOut);
        Assert.That(poller.Poll(Wait.Long), Is.EqualTo(1), "a connected PAIR is writable");
        Assert.That(poller.GetReturnedEvents(a), Is.EqualTo(PollEvents.PollOut));

        poller.RemoveAt(a);
        Assert.That(poller.Count, Is.EqualTo(1));
        Assert.That(poller.GetSocket(0), Is.SameAs(b1));
    }

    [Test, CancelAfter(20_000)]
    public void Poll_MixesSocketsAndRawDescriptors()
    {
        using var listener = new System.Net.Sockets.Socket(AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var client = new System.Net.Sockets.Socket(AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, ProtocolType.Tcp);
        client.Connect(listener.LocalEndPoint!);
        using var accepted = listener.Accept();

        using var pair = Context.CreateSocket(ZlinkSocketType.Pair);
        pair.Bind(Endpoints.Inproc());

        var poller = new ZlinkPoller();
        int socketItem = poller.Add(pair, PollEvents.PollIn);
        int fdItem = poller.Add((int)accepted.Handle, PollEvents.PollIn);
        Assert.That(poller.Poll(TimeSpan.FromMilliseconds(10)), Is.Zero);

        client.Send(Wait.Bytes("x"));
        Assert.That(poller.Poll(Wait.Long), Is.EqualTo(1));
        Assert.That(poller.GetReturnedEvents(fdItem), Is.EqualTo(PollEvents.PollIn));
        Assert.That(poller.GetReturnedEvents(socketItem), Is.EqualTo(PollEvents.None));
        Assert.That(poller.GetSocket(fdItem), Is.Null);
    }

    [Test, CancelAfter(20_000)]
    public void Poll_OnADisposedSocket_ThrowsObjectDisposed()
    {
        var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        var poller = new ZlinkPoller();
        poller.Add(socket, PollEvents.PollIn);
        socket.Dispose();

        Assert.Throws<ObjectDisposedException>(() => poller.Poll(TimeSpan.Zero));
    }

    [Test, CancelAfter(20_000)]
    public void Poll_IsReleasedByContextShutdown()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        socket.Bind(Endpoints.Inproc());
        var poller = new ZlinkPoller();
        poller.Add(socket, PollEvents.PollIn);

        var polling = Task.Factory.StartNew(() => poller.Poll(Timeout.InfiniteTimeSpan), TaskCreationOptions.LongRunning);
        Thread.Sleep(100);
        Context.Shutdown();

        var error = Assert.Throws<AggregateException>(() => polling.Wait(Wait.Long))!;
        Assert.That(error.InnerException, Is.TypeOf<ContextTerminatedException>());
    }
    [Test, CancelAfter(20_000)]
    public void Add_OfADisposedSocket_ThrowsObjectDisposed_AndAddsNothing()
    {
        var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        socket.Dispose();
        var poller = new ZlinkPoller();

        var error = Assert.Throws<ObjectDisposedException>(() => poller.Add(socket, PollEvents.PollIn))!;
        Assert.Multiple(() =>
        {
            Assert.That(error.Message, Does.Contain("Poller.Add"));
            Assert.That(poller.Count, Is.Zero);
        });
    }
}
