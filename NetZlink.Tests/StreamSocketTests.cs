// STREAM sockets: 0x01 / 0x00 connection events on bind and connect, data both ways (whole bodies,
// Length framing), [id] + empty payload closes, EHOSTUNREACH for unknown ids, CONNECT_ROUTING_ID,
// plain TCP clients, and one socket holding hundreds of connections to one endpoint. The framings
// themselves, over every transport: StreamFramingTests.
namespace NetZlink.Tests;

public sealed class StreamSocketTests : ContextTest
{
    [Test, CancelAfter(30_000)]
    public void BindAndConnect_DeliverConnectEvents_Data_AndCloseByEmptyPayload()
    {
        var (server, client) = Sockets(ZlinkSocketType.Stream, ZlinkSocketType.Stream);
        (RoutingId clientSide, RoutingId serverSide) = StreamSockets.Connect(server, client);

        StreamSockets.Send(client, clientSide, Wait.Bytes("hello"));
        (RoutingId from, byte[] request) = StreamSockets.Receive(server);
        Assert.That(from, Is.EqualTo(serverSide));
        Assert.That(Wait.Text(request), Is.EqualTo("hello"));

        // The same through zlink messages: a zero-copy payload out, a whole message in.
        int released = 0;
        client.Send(clientSide.Span, SendFlags.SendMore);
        using (var payload = ZlinkMessage.FromArray(Wait.Bytes("zero-copy"), _ => Interlocked.Increment(ref released)))
        {
            client.Send(payload);
        }

        List<byte[]> message = Wait.Message(server);
        Assert.That(message, Has.Count.EqualTo(2));
        Assert.That(new RoutingId(message[0]), Is.EqualTo(serverSide));
        Assert.That(Wait.Text(message[1]), Is.EqualTo("zero-copy"));
        Wait.Until(() => Volatile.Read(ref released) == 1, "the zero-copy payload's release");

        StreamSockets.Send(server, serverSide, Wait.Bytes("world"));
        (RoutingId to, byte[] reply) = StreamSockets.Receive(client);
        Assert.That(to, Is.EqualTo(clientSide));
        Assert.That(Wait.Text(reply), Is.EqualTo("world"));

        StreamSockets.Send(server, serverSide, []);
        Assert.That(StreamSockets.ReceiveEvent(client, StreamSockets.Disconnected), Is.EqualTo(clientSide));

        Assert.Throws<HostUnreachableException>(() => StreamSockets.Send(client, clientSide, Wait.Bytes("gone")));
    }

    [Test, CancelAfter(30_000)]
    public void TrySendTo_SendsTheWholeMessage_CloseConnectionEndsIt_AndOtherKindsAreRefused()
    {
        var (server, client) = Sockets(ZlinkSocketType.Stream, ZlinkSocketType.Stream);
        (RoutingId clientSide, RoutingId serverSide) = StreamSockets.Connect(server, client);

        Assert.That(server.TrySendTo(serverSide, Wait.Bytes("world"), Wait.Long), Is.True);
        (RoutingId to, byte[] reply) = StreamSockets.Receive(client);
        Assert.That(to, Is.EqualTo(clientSide));
        Assert.That(reply, Is.EqualTo(Wait.Bytes("world")));

        Assert.That(server.CloseConnection(serverSide), Is.True);
        Assert.That(StreamSockets.ReceiveEvent(client, StreamSockets.Disconnected), Is.EqualTo(clientSide));
        Assert.That(StreamSockets.ReceiveEvent(server, StreamSockets.Disconnected), Is.EqualTo(serverSide));
        Assert.That(server.CloseConnection(serverSide), Is.False, "a connection already gone");
        Assert.Throws<HostUnreachableException>(() => server.TrySendTo(serverSide, Wait.Bytes("gone")));

        using var pair = Context.CreateSocket(ZlinkSocketType.Pair);
        var refused = Assert.Throws<InvalidOperationException>(() => pair.TrySendTo(serverSide, Wait.Bytes("x")));
        Assert.That(refused!.Message, Does.Contain("STREAM"));
    }

    [Test, CancelAfter(30_000)]
    public void Send_ToAnUnknownRoutingId_IsHostUnreachable()
    {
        using var server = Context.CreateSocket(ZlinkSocketType.Stream);
        StreamSockets.Bind(server);

        var error = Assert.Throws<HostUnreachableException>(() => StreamSockets.Send(server, RoutingId.FromUInt32(0xDEADBEEF), Wait.Bytes("x")))!;
        Assert.That(error.Error, Is.EqualTo(ZlinkError.EHOSTUNREACH));
    }

    [RequiresStreamClient]
    [Test, CancelAfter(30_000)]
    public void ConnectRoutingId_NamesTheConnection()
    {
        var (server, client) = Sockets(ZlinkSocketType.Stream, ZlinkSocketType.Stream);
        string endpoint = StreamSockets.Bind(server);

        RoutingId chosen = RoutingId.FromUInt32(0x0A0B0C0D);
        client.SetOption(SocketOption.ConnectRoutingId, chosen.Span);
        StreamSockets.ConnectOrIgnore(client, endpoint);

        Assert.That(StreamSockets.ReceiveEvent(client, StreamSockets.Connected), Is.EqualTo(chosen));
        Assert.That(chosen.ToUInt32(), Is.EqualTo(0x0A0B0C0Du));
        StreamSockets.ReceiveEvent(server, StreamSockets.Connected);
    }

    [Test, CancelAfter(30_000)]
    public void Server_WithAPlainTcpClient_ReportsConnectDataAndDisconnect()
    {
        using var server = Context.CreateSocket(ZlinkSocketType.Stream);
        var endpoint = new Uri(StreamSockets.Bind(server));

        using var client = new TcpClient();
        client.Connect(endpoint.Host, endpoint.Port);
        RoutingId id = StreamSockets.ReceiveEvent(server, StreamSockets.Connected);

        // A STREAM server reads [u32 BE length][body] frames and hands over the body (Length
        // framing, the default, as on zlink 1.3): the framed packet arrives as "abc", whole.
        byte[] framed = [0, 0, 0, 3, (byte)'a', (byte)'b', (byte)'c'];
        client.GetStream().Write(framed);
        (RoutingId from, byte[] payload) = StreamSockets.Receive(server);
        Assert.That(from, Is.EqualTo(id));
        Assert.That(payload, Is.EqualTo(framed[4..]));

        client.Close();
        Assert.That(StreamSockets.ReceiveEvent(server, StreamSockets.Disconnected), Is.EqualTo(id));
    }

    [Test, CancelAfter(30_000)]
    public void PeerIntrospection_DescribesEachConnection()
    {
        using var server = Context.CreateSocket(ZlinkSocketType.Stream);
        var endpoint = new Uri(StreamSockets.Bind(server));
        using var client = new TcpClient();
        client.Connect(endpoint.Host, endpoint.Port);
        RoutingId id = StreamSockets.ReceiveEvent(server, StreamSockets.Connected);

        Assert.That(server.PeerCount, Is.EqualTo(1));
        Assert.That(server.GetPeerRoutingId(0), Is.EqualTo(id));
        PeerInfo info = server.GetPeerInfo(id);
        Assert.That(info.RoutingId, Is.EqualTo(id));
        Assert.That(info.RemoteAddress, Does.Contain("127.0.0.1"));
        IReadOnlyList<PeerInfo> peers = server.GetPeers();
        Assert.That(peers.Select(p => p.RoutingId), Is.EqualTo(new[] { id }));
        TestContext.Out.WriteLine(info);

        var unknown = Assert.Throws(Is.InstanceOf<ZlinkException>(), () => server.GetPeerInfo(RoutingId.FromUInt32(0xFFFFFFFF))) as ZlinkException;
        // EINVAL in NetZlink's library, ENOENT in zlink 1.3 (docs/zlink-abi.md, "Where a real zlink 1.3 build differs").
        Assert.That(unknown!.Error, Is.EqualTo(ZlinkError.EINVAL).Or.EqualTo(ZlinkError.EHOSTUNREACH).Or.EqualTo(ZlinkError.ENOENT));
        Assert.That(unknown.Message, Does.StartWith("GetPeerInfo(FFFFFFFF) failed: "));
    }

    [Test, CancelAfter(120_000)]
    public void OneStreamSocket_HoldsHundredsOfConnectionsToOneEndpoint()
    {
        const int connections = 500;
        var (server, client) = Sockets(ZlinkSocketType.Stream, ZlinkSocketType.Stream);
        server.Backlog = 1024;
        string endpoint = StreamSockets.Bind(server);

        StreamSockets.ConnectOrIgnore(client, endpoint);
        for (int i = 1; i < connections; i++)
        {
            client.Connect(endpoint);
        }

        var clientIds = new HashSet<RoutingId>();
        var serverIds = new HashSet<RoutingId>();
        var poller = new ZlinkPoller();
        poller.Add(client, PollEvents.PollIn);
        poller.Add(server, PollEvents.PollIn);
        byte[] idBuffer = new byte[256];
        byte[] payload = new byte[256];
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while ((clientIds.Count < connections || serverIds.Count < connections) && DateTime.UtcNow < deadline)
        {
            Wait.Token.ThrowIfCancellationRequested();
            poller.Poll(TimeSpan.FromMilliseconds(100));
            Drain(client, clientIds);
            Drain(server, serverIds);
        }

        Assert.That(clientIds, Has.Count.EqualTo(connections), "0x01 events on the connecting socket");
        Assert.That(serverIds, Has.Count.EqualTo(connections), "0x01 events on the listening socket");
        Assert.That(client.PeerCount, Is.EqualTo(connections));
        Assert.That(server.PeerCount, Is.EqualTo(connections));

        // Every connection carries its own data.
        foreach (RoutingId id in clientIds)
        {
            StreamSockets.Send(client, id, id.Span);
        }

        int echoed = 0;
        var seen = new HashSet<RoutingId>();
        deadline = DateTime.UtcNow.AddSeconds(30);
        while (echoed < connections && DateTime.UtcNow < deadline)
        {
            if (!server.TryReceive(idBuffer, TimeSpan.FromMilliseconds(100), out int idSize))
            {
                continue;
            }

            int size = server.Receive(payload);
            Assert.That(size, Is.EqualTo(4), "one 4-byte payload per connection");
            Assert.That(serverIds, Does.Contain(new RoutingId(idBuffer.AsSpan(0, idSize))));
            Assert.That(seen.Add(new RoutingId(payload.AsSpan(0, size))), Is.True, "each client id arrives once");
            echoed++;
        }

        Assert.That(echoed, Is.EqualTo(connections));

        void Drain(ZlinkSocket socket, HashSet<RoutingId> ids)
        {
            while (socket.TryReceive(idBuffer, out int idSize))
            {
                int size = socket.Receive(payload);
                Assert.That(size, Is.EqualTo(1));
                Assert.That(payload[0], Is.EqualTo(StreamSockets.Connected));
                Assert.That(ids.Add(new RoutingId(idBuffer.AsSpan(0, idSize))), Is.True, "routing ids are unique");
            }
        }
    }
}
