// Test helpers for STREAM sockets: a bound server, a connecting client that is ignored where
// STREAM sockets cannot connect (zlink 1.3 STREAM is server-only; NativeNeeds), and two-frame receives.
namespace NetZlink.Tests;

internal static class StreamSockets
{
    public const byte Connected = 0x01;
    public const byte Disconnected = 0x00;

    /// <summary>Connects <paramref name="client"/> to <paramref name="server"/> (bound here) and returns each side's id of the connection.</summary>
    public static (RoutingId ClientSide, RoutingId ServerSide) Connect(ZlinkSocket server, ZlinkSocket client)
    {
        ConnectOrIgnore(client, Bind(server));
        RoutingId clientSide = ReceiveEvent(client, Connected);
        RoutingId serverSide = ReceiveEvent(server, Connected);
        return (clientSide, serverSide);
    }

    /// <summary>Binds a STREAM socket on a fresh loopback port; returns the endpoint.</summary>
    public static string Bind(ZlinkSocket server)
    {
        server.Bind("tcp://127.0.0.1:*");
        return server.LastEndpoint;
    }

    /// <summary>
    /// Binds <paramref name="server"/> on a fresh loopback port, connects the plain TCP
    /// <paramref name="client"/> to it and returns the server's id of the connection (its connect event).
    /// </summary>
    public static RoutingId ConnectTcp(ZlinkSocket server, System.Net.Sockets.TcpClient client)
    {
        var endpoint = new Uri(Bind(server));
        client.Connect(endpoint.Host, endpoint.Port);
        return ReceiveEvent(server, Connected);
    }

    /// <summary>Connects a STREAM client, or ignores the test when the native library's STREAM cannot connect (<see cref="NativeNeeds"/>).</summary>
    public static void ConnectOrIgnore(ZlinkSocket client, string endpoint)
    {
        NativeNeeds.RequireStreamClient();
        client.Connect(endpoint);
    }

    /// <summary>
    /// Sets a STREAM socket's framing before it binds or connects; <see cref="StreamFraming.Length"/>
    /// (the default, and all a zlink 1.3 library has) is left as it is, other framings need NetZlink's
    /// library: on one without, the test is ignored.
    /// </summary>
    public static void UseFraming(ZlinkSocket socket, StreamFraming framing)
    {
        if (framing != StreamFraming.Length)
        {
            NativeNeeds.RequireStreamFraming();
            socket.StreamFraming = framing;
        }
    }

    /// <summary>Receives one [routing id][payload] message within the deadline (the payload whole, whatever its size).</summary>
    public static (RoutingId Id, byte[] Payload) Receive(ZlinkSocket socket, TimeSpan? timeout = null)
    {
        byte[] id = Wait.Frame(socket, timeout);
        Assert.That(socket.ReceiveMore, Is.True, "a STREAM message starts with its routing id frame");
        using var payload = new ZlinkMessage();
        Assert.That(socket.TryReceive(payload, timeout ?? Wait.Long), Is.True, "the payload after the routing id");
        Assert.That(socket.ReceiveMore, Is.False, "a STREAM message has exactly two frames");
        return (new RoutingId(id), payload.ToArray());
    }

    /// <summary>
    /// Receives the next message and checks it is the connection event <paramref name="expected"/>:
    /// the one-byte payload 0x01 or 0x00, or in Raw framing a zero-length payload that
    /// ZLINK_STREAM_EVENT names.
    /// </summary>
    public static RoutingId ReceiveEvent(ZlinkSocket socket, byte expected)
    {
        (RoutingId id, byte[] payload) = Receive(socket);
        if (payload.Length == 0)
        {
            Assert.That((int)socket.StreamEvent, Is.EqualTo((int)expected), expected == Connected ? "a zero-length connect event" : "a zero-length disconnect event");
        }
        else
        {
            Assert.That(payload, Is.EqualTo(new[] { expected }), expected == Connected ? "connect event 0x01" : "disconnect event 0x00");
        }

        Assert.That(id.Length, Is.EqualTo(4), "zlink STREAM routing ids are 4 bytes");
        return id;
    }

    /// <summary>Sends [id] + SNDMORE, then the payload (blocking).</summary>
    public static void Send(ZlinkSocket socket, RoutingId id, ReadOnlySpan<byte> payload)
    {
        socket.Send(id.Span, SendFlags.SendMore);
        socket.Send(payload);
    }
}
