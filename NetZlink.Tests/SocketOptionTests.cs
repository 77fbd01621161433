// Typed option round-trips: int, bool, long, bytes and string options read back what was set,
// and the binding's default LINGER is 0.
namespace NetZlink.Tests;

public sealed class SocketOptionTests : ContextTest
{
    [Test, CancelAfter(10_000)]
    public void EverySocketStartsWithLingerZero()
    {
        foreach (ZlinkSocketType type in Enum.GetValues<ZlinkSocketType>())
        {
            using var socket = Context.CreateSocket(type);
            Assert.That(socket.Linger, Is.Zero, $"{type}");
            Assert.That(socket.GetOptionInt32(SocketOption.Type), Is.EqualTo((int)type), $"{type}");
        }
    }

    [Test, CancelAfter(10_000)]
    public void IntOptions_RoundTrip()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);

        socket.Linger = 250;
        socket.SendHighWaterMark = 123;
        socket.ReceiveHighWaterMark = 456;
        socket.SendTimeout = 1500;
        socket.ReceiveTimeout = 2500;
        socket.Backlog = 77;
        socket.SendBufferSize = 65536;
        socket.ReceiveBufferSize = 131072;
        socket.SetOption(SocketOption.ReconnectInterval, 321);
        socket.SetOption(SocketOption.Immediate, true);

        Assert.Multiple(() =>
        {
            Assert.That(socket.Linger, Is.EqualTo(250));
            Assert.That(socket.SendHighWaterMark, Is.EqualTo(123));
            Assert.That(socket.ReceiveHighWaterMark, Is.EqualTo(456));
            Assert.That(socket.SendTimeout, Is.EqualTo(1500));
            Assert.That(socket.ReceiveTimeout, Is.EqualTo(2500));
            Assert.That(socket.Backlog, Is.EqualTo(77));
            Assert.That(socket.SendBufferSize, Is.EqualTo(65536));
            Assert.That(socket.ReceiveBufferSize, Is.EqualTo(131072));
            Assert.That(socket.GetOptionInt32(SocketOption.ReconnectInterval), Is.EqualTo(321));
            Assert.That(socket.GetOptionInt32(SocketOption.Immediate), Is.EqualTo(1));
        });
    }

    [Test, CancelAfter(10_000)]
    public void LongOptions_RoundTrip()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);

        socket.MaxMessageSize = 5_000_000_000L;
        socket.SetOption(SocketOption.Affinity, 3L);

        Assert.That(socket.MaxMessageSize, Is.EqualTo(5_000_000_000L));
        Assert.That(socket.GetOptionInt64(SocketOption.Affinity), Is.EqualTo(3L));
    }

    [Test, CancelAfter(10_000)]
    public void BytesOptions_RoundTrip()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);

        var id = new RoutingId([0xCA, 0xFE, 0x00, 0x01]);
        socket.RoutingId = id;
        Assert.That(socket.RoutingId, Is.EqualTo(id));
        Assert.That(socket.GetOptionBytes(SocketOption.RoutingId), Is.EqualTo(new byte[] { 0xCA, 0xFE, 0x00, 0x01 }));

        Span<byte> small = stackalloc byte[16];
        int length = socket.GetOption(SocketOption.RoutingId, small);
        Assert.That(small[..length].ToArray(), Is.EqualTo(id.ToArray()));
    }

    [Test, CancelAfter(10_000)]
    public void StringOptions_RoundTrip()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);

        string endpoint = Endpoints.Inproc();
        socket.Bind(endpoint);
        Assert.That(socket.LastEndpoint, Is.EqualTo(endpoint));

        socket.Bind("tcp://127.0.0.1:*");
        Assert.That(socket.LastEndpoint, Does.Match(@"^tcp://127\.0\.0\.1:\d+$"));
        Assert.That(socket.GetOptionString(SocketOption.LastEndpoint), Is.EqualTo(socket.LastEndpoint));
    }

    [Test, CancelAfter(10_000)]
    public void ReadOnlyOptions_ReportState()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        socket.Bind(Endpoints.Inproc());

        Assert.That(socket.ReceiveMore, Is.False);
        Assert.That(socket.FileDescriptor, Is.GreaterThan(0));
        Assert.That(socket.Events & PollEvents.PollIn, Is.EqualTo(PollEvents.None));
    }

    [Test, CancelAfter(10_000)]
    public void ContextOptions_RoundTrip()
    {
        using var context = new ZlinkContext(ioThreads: 1);
        Assert.That(context.IoThreads, Is.EqualTo(1));
        context.MaxSockets = 512;
        Assert.That(context.MaxSockets, Is.EqualTo(512));
        Assert.That(context.GetOption(ContextOption.MessageStructSize), Is.EqualTo(64), "zlink_msg_t must be the 64 bytes the binding allocates");

        var error = Assert.Throws<SocketOptionException>(() => context.SetOption((ContextOption)777, 1))!;
        Assert.That(error.Option, Is.EqualTo("777"));
    }

    [Test, CancelAfter(30_000)]
    public void PastMaxSockets_CreateSocketSaysItWasTheContextsLimit()
    {
        Context.MaxSockets = 4;
        var sockets = new List<ZlinkSocket>();
        try
        {
            var error = Assert.Throws<ZlinkException>(() =>
            {
                for (int i = 0; i < 16; i++)
                {
                    sockets.Add(Context.CreateSocket(ZlinkSocketType.Pair));
                }
            })!;
            Assert.That(error.Message, Does.Contain("EMFILE").And.Contain("MaxSockets is 4").And.Contain("raise ZlinkContext.MaxSockets"));
            Assert.That(sockets, Has.Count.LessThanOrEqualTo(4));
        }
        finally
        {
            foreach (ZlinkSocket socket in sockets)
            {
                socket.Dispose();
            }
        }
    }

    [Test]
    public void HeartbeatSettings_RefuseWhatTheWireCannotCarry_AndKeepTheRest()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Dealer);
        Assert.That(socket.HeartbeatTimeout, Is.EqualTo(-1), "-1 until set (the interval)");
        Assert.Multiple(() =>
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => socket.HeartbeatTimeout = -1);
            Assert.Throws<ArgumentOutOfRangeException>(() => socket.HeartbeatTtl = -5);
            Assert.Throws<ArgumentOutOfRangeException>(() => socket.HeartbeatTtl = 1);
            Assert.Throws<ArgumentOutOfRangeException>(() => socket.HeartbeatTtl = 99);
            Assert.Throws<ArgumentOutOfRangeException>(() => socket.HeartbeatTtl = 6_553_600);
        });
        Assert.That(socket.HeartbeatTimeout, Is.EqualTo(-1), "a refused value changes nothing");
        socket.HeartbeatTimeout = 0;
        socket.HeartbeatTtl = 100;
        Assert.Multiple(() =>
        {
            Assert.That(socket.HeartbeatTimeout, Is.Zero);
            Assert.That(socket.HeartbeatTtl, Is.EqualTo(100));
        });
    }
}
