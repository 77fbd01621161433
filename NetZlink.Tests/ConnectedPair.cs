// Two connected sockets of one pattern, for tests that must show sockets still carry data after
// bad input: PAIR–PAIR, STREAM client–STREAM server (with each side's routing id for the
// connection) or DEALER–ROUTER. Exchange sends a payload each way and checks it arrived byte for
// byte; a STREAM payload may arrive cut into several reads and is put back together.
namespace NetZlink.Tests;

internal sealed class ConnectedPair : IDisposable
{
    private RoutingId _firstSide;
    private RoutingId _secondSide;

    private ConnectedPair(ZlinkSocket first, ZlinkSocket second)
    {
        First = first;
        Second = second;
    }

    /// <summary>PAIR: the connecting side; STREAM: the client; DEALER.</summary>
    public ZlinkSocket First { get; }

    /// <summary>PAIR: the bound side; STREAM: the server; ROUTER.</summary>
    public ZlinkSocket Second { get; }

    /// <summary>STREAM: the connection's routing id on First's side.</summary>
    public RoutingId FirstSide => _firstSide;

    /// <summary>STREAM: the connection's routing id on Second's side (ROUTER: the DEALER's id, once it sent).</summary>
    public RoutingId SecondSide => _secondSide;

    /// <param name="context">The context.</param>
    /// <param name="type">PAIR, STREAM or DEALER (whose peer is a ROUTER).</param>
    /// <param name="transport">tcp or inproc (STREAM: tcp).</param>
    /// <param name="beforeConnecting">Called with each socket ("first", "second") before it binds or connects.</param>
    public static ConnectedPair Open(ZlinkContext context, ZlinkSocketType type, string transport, Action<ZlinkSocket, string>? beforeConnecting = null)
    {
        ZlinkSocketType peer = type == ZlinkSocketType.Dealer ? ZlinkSocketType.Router : type;
        ZlinkSocket second = context.CreateSocket(peer);
        ZlinkSocket first = context.CreateSocket(type);
        var pair = new ConnectedPair(first, second);
        try
        {
            beforeConnecting?.Invoke(first, "first");
            beforeConnecting?.Invoke(second, "second");
            string endpoint = type == ZlinkSocketType.Stream ? StreamSockets.Bind(second) : Endpoints.BindFresh(second, transport);
            if (type == ZlinkSocketType.Stream)
            {
                StreamSockets.ConnectOrIgnore(first, endpoint);
                pair._firstSide = StreamSockets.ReceiveEvent(first, StreamSockets.Connected);
                pair._secondSide = StreamSockets.ReceiveEvent(second, StreamSockets.Connected);
            }
            else
            {
                first.Connect(endpoint);
            }

            return pair;
        }
        catch
        {
            pair.Dispose();
            throw;
        }
    }

    /// <summary>Sends <paramref name="payload"/> from First to Second and back, checking every byte.</summary>
    public void Exchange(byte[] payload, string where)
    {
        Send(First, _firstSide, payload, where);
        Assert.That(Receive(Second, payload.Length, where + ", first to second"), Is.EqualTo(payload), $"{where}: first to second");
        Send(Second, _secondSide, payload, where);
        Assert.That(Receive(First, payload.Length, where + ", second to first"), Is.EqualTo(payload), $"{where}: second to first");
    }

    public void Dispose()
    {
        First.Dispose();
        Second.Dispose();
    }

    private void Send(ZlinkSocket socket, RoutingId streamId, byte[] payload, string where)
    {
        if (socket.Type == ZlinkSocketType.Stream)
        {
            StreamSockets.Send(socket, streamId, payload);
            return;
        }

        if (socket.Type == ZlinkSocketType.Router)
        {
            Assert.That(socket.TrySend(_secondSide.Span, Wait.Long, SendFlags.SendMore), Is.True, $"{where}: ROUTER id frame");
        }

        Assert.That(socket.TrySend(payload, Wait.Long), Is.True, $"{where}: {socket.Type} could not send");
    }

    private byte[] Receive(ZlinkSocket socket, int length, string where)
    {
        using var message = new ZlinkMessage();
        if (socket.Type == ZlinkSocketType.Router)
        {
            Assert.That(socket.TryReceive(message, Wait.Long), Is.True, $"{where}: nothing arrived at the ROUTER");
            _secondSide = new RoutingId(message.ToArray());
        }

        if (socket.Type != ZlinkSocketType.Stream)
        {
            Assert.That(socket.TryReceive(message, Wait.Long), Is.True, $"{where}: nothing arrived at the {socket.Type}");
            return message.ToArray();
        }

        // STREAM: [id][bytes] reads until the payload is complete.
        var received = new List<byte>(length);
        while (received.Count < length)
        {
            Assert.That(socket.TryReceive(message, Wait.Long), Is.True, $"{where}: {received.Count} of {length} bytes arrived");
            Assert.That(message.More, Is.True, $"{where}: a STREAM message starts with its routing id");
            Assert.That(socket.TryReceive(message, Wait.Long), Is.True, $"{where}: the payload frame after the routing id");
            received.AddRange(message.Data);
        }

        return [.. received];
    }
}
