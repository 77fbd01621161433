// Dispose is idempotent and thread-safe, calls after Dispose throw ObjectDisposedException,
// disposing a context with open sockets neither hangs nor crashes, a receive blocked in another
// thread is released with ContextTerminatedException, and abandoned objects are cleaned up by
// finalizers without blocking them.
namespace NetZlink.Tests;

[TestFixture]
public sealed class LifetimeTests
{
    [Test, CancelAfter(30_000)]
    public void SocketDispose_FromManyThreadsAtOnce_IsSafe()
    {
        using var context = new ZlinkContext();
        for (int round = 0; round < 50; round++)
        {
            var socket = context.CreateSocket(ZlinkSocketType.Dealer);
            socket.Bind(Endpoints.Inproc());
            using var start = new Barrier(8);
            var threads = Enumerable.Range(0, 8).Select(_ => new Thread(() =>
            {
                start.SignalAndWait();
                socket.Dispose();
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            Assert.That(socket.IsDisposed, Is.True);
        }

        Assert.That(HandleTracker.Live(NativeHandleKind.Socket), Is.Zero);
    }

    [Test, CancelAfter(30_000)]
    public void ContextDispose_FromManyThreadsAtOnce_WithOpenSockets_IsSafe()
    {
        for (int round = 0; round < 20; round++)
        {
            var context = new ZlinkContext();
            var sockets = Enumerable.Range(0, 4).Select(_ => context.CreateSocket(ZlinkSocketType.Pair)).ToList();
            sockets[0].Bind("tcp://127.0.0.1:*");
            sockets[1].Connect(sockets[0].LastEndpoint);
            sockets[1].TrySend(Wait.Bytes("unsent, lingering"));

            using var start = new Barrier(6);
            var threads = Enumerable.Range(0, 6).Select(i => new Thread(() =>
            {
                start.SignalAndWait();
                if (i % 2 == 0)
                {
                    context.Dispose();
                }
                else
                {
                    sockets[i % sockets.Count].Dispose();
                }
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => Assert.That(t.Join(Wait.Long), Is.True, "Dispose hung"));
            Assert.That(sockets.All(s => s.IsDisposed), Is.True);
        }
    }

    [Test, CancelAfter(30_000)]
    public void EveryCall_AfterDispose_ThrowsObjectDisposed()
    {
        var context = new ZlinkContext();
        var socket = context.CreateSocket(ZlinkSocketType.Pair);
        socket.Dispose();

        Assert.Multiple(() =>
        {
            Assert.Throws<ObjectDisposedException>(() => socket.Bind(Endpoints.Inproc()));
            Assert.Throws<ObjectDisposedException>(() => socket.Connect(Endpoints.Inproc()));
            Assert.Throws<ObjectDisposedException>(() => socket.Send(new byte[1]));
            Assert.Throws<ObjectDisposedException>(() => socket.TrySend(new byte[1]));
            Assert.Throws<ObjectDisposedException>(() => socket.Receive(new byte[1]));
            Assert.Throws<ObjectDisposedException>(() => socket.TryReceive(new byte[1], out _));
            Assert.Throws<ObjectDisposedException>(() => _ = socket.Linger);
            Assert.Throws<ObjectDisposedException>(() => socket.OpenMonitor());
        });

        context.Dispose();
        context.Dispose();
        Assert.Multiple(() =>
        {
            Assert.That(context.IsDisposed, Is.True);
            Assert.Throws<ObjectDisposedException>(() => context.CreateSocket(ZlinkSocketType.Pair));
            Assert.Throws<ObjectDisposedException>(() => _ = context.IoThreads);
            Assert.Throws<ObjectDisposedException>(context.Shutdown);
        });
    }

    [Test, CancelAfter(30_000)]
    public void ContextDispose_WithOpenSocketsAndQueuedMessages_DoesNotHang()
    {
        var context = new ZlinkContext();
        var server = context.CreateSocket(ZlinkSocketType.Pair);
        var client = context.CreateSocket(ZlinkSocketType.Pair);
        client.Connect(Endpoints.BindFresh(server, "tcp"));
        for (int i = 0; i < 100; i++)
        {
            client.TrySend(new byte[1000]);
        }

        var watch = Stopwatch.StartNew();
        context.Dispose();
        Assert.That(watch.Elapsed, Is.LessThan(TimeSpan.FromSeconds(5)));
        Assert.That(server.IsDisposed && client.IsDisposed, Is.True);
        Assert.Throws<ObjectDisposedException>(() => client.Send(new byte[1]));
    }

    [TestCase(ZlinkSocketType.Pair), TestCase(ZlinkSocketType.Stream), CancelAfter(30_000)]
    public void BlockedReceive_IsReleasedWithContextTerminated_WhenTheContextIsDisposed(ZlinkSocketType type)
    {
        var context = new ZlinkContext();
        var socket = context.CreateSocket(type);
        socket.Bind(type == ZlinkSocketType.Stream ? "tcp://127.0.0.1:*" : Endpoints.Inproc());

        Exception? caught = null;
        var receiver = new Thread(() =>
        {
            try
            {
                socket.Receive(new byte[16]);
            }
            catch (Exception e)
            {
                caught = e;
            }
        });
        receiver.Start();
        Thread.Sleep(200);

        var watch = Stopwatch.StartNew();
        context.Dispose();
        Assert.That(receiver.Join(Wait.Long), Is.True, "the blocked receive was not released");
        Assert.That(watch.Elapsed, Is.LessThan(TimeSpan.FromSeconds(5)));
        Assert.That(caught, Is.TypeOf<ContextTerminatedException>());
        Assert.That(socket.IsDisposed, Is.True);
    }

    [Test, CancelAfter(30_000)]
    public void SocketDispose_DuringSendsOnAnotherThread_NeverCrashes()
    {
        // Dispose lands at random points of the pump's calls (the close is deferred to a call in
        // progress, whose exit has no fence of its own: see SocketHandle); every close must still
        // happen exactly once.
        var random = new Random(20261122);
        using var context = new ZlinkContext();
        for (int round = 0; round < 200; round++)
        {
            var receiver = context.CreateSocket(ZlinkSocketType.Pair);
            var sender = context.CreateSocket(ZlinkSocketType.Pair);
            sender.Connect(Endpoints.BindFresh(receiver, "inproc"));

            Exception? caught = null;
            var pump = new Thread(() =>
            {
                try
                {
                    byte[] buffer = new byte[64];
                    while (true)
                    {
                        sender.TrySend(buffer);
                        receiver.TryReceive(buffer, out _);
                    }
                }
                catch (ObjectDisposedException e)
                {
                    caught = e;
                }
            });
            pump.Start();
            Thread.SpinWait(random.Next(1, 200_000));
            receiver.Dispose();
            sender.Dispose();
            Assert.That(pump.Join(Wait.Long), Is.True);
            Assert.That(caught, Is.TypeOf<ObjectDisposedException>());
            Assert.That(HandleTracker.Live(NativeHandleKind.Socket), Is.Zero, $"round {round}: a socket was never closed");
        }
    }

    [Test, CancelAfter(30_000)]
    public void AbandonedContextAndSockets_AreReleasedByFinalizers()
    {
        int before = HandleTracker.LiveCount;
        Abandon();

        Wait.Until(() =>
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            return HandleTracker.LiveCount == before;
        }, "finalizers to release the abandoned context and sockets");

        static void Abandon()
        {
            var context = new ZlinkContext();
            var server = context.CreateSocket(ZlinkSocketType.Pair);
            var client = context.CreateSocket(ZlinkSocketType.Pair);
            client.Connect(Endpoints.BindFresh(server, "tcp"));
            client.Send(Wait.Bytes("queued"));
            _ = context.CreateSocket(ZlinkSocketType.Stream);
            _ = server.OpenMonitor();
        }
    }

    [Test, CancelAfter(30_000)]
    public void SocketHandle_KeepsItsContextHandleAlive()
    {
        var context = new ZlinkContext();
        var socket = context.CreateSocket(ZlinkSocketType.Pair);
        Assert.That(HandleTracker.Live(NativeHandleKind.Context), Is.GreaterThanOrEqualTo(1));

        // Closing the context object's own reference first: the native context must survive
        // until the socket handle lets go, which ZlinkContext.Dispose arranges by closing it.
        int contexts = HandleTracker.Live(NativeHandleKind.Context);
        bool added = false;
        socket.Handle.DangerousAddRef(ref added);
        context.Dispose();
        Assert.That(HandleTracker.Live(NativeHandleKind.Context), Is.EqualTo(contexts), "context released while a socket call was in flight");
        socket.Handle.DangerousRelease();
        Assert.That(HandleTracker.Live(NativeHandleKind.Context), Is.EqualTo(contexts - 1));
    }
}
