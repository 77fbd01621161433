// Test helpers for STREAM sockets: a bound server, a connecting client that turns "connect not
// supported" (zlink 1.3 STREAM is server-only) into Assert.Ignore, and two-frame receives.
namespace NetZlink.Tests;

internal static class StreamSockets
{
    public const byte Connected = 0x01;
    public const byte Disconnected = 0x00;

    /// <summary>Binds a STREAM socket on a fresh loopback port; returns the endpoint.</summary>
    /// <summary>Connects <paramref name="client"/> to <paramref name="server"/> (bound here) and returns each side's id of the connection.</summary>
    public static (RoutingId ClientSide, RoutingId ServerSide) Connect(ZlinkSocket server, ZlinkSocket client)
    {
        ConnectOrIgnore(client, Bind(server));
        RoutingId clientSide = ReceiveEvent(client, Connected);
        RoutingId serverSide = ReceiveEvent(server, Connected);
        return (clientSide, serverSide);
    }

    public static string Bind(ZlinkSocket server)
    {
        server.Bind("tcp://127.0.0.1:*");
        return server.LastEndpoint;
    }

    /// <summary>Connects a STREAM client, or ignores the test when the native library's STREAM cannot connect.</summary>
    public static void ConnectOrIgnore(ZlinkSocket client, string endpoint)
    {
        try
        {
            client.Connect(endpoint);
        }
        catch (ZlinkNotSupportedException e)
        {
            Assert.Ignore($"STREAM connect is not supported by this native library (a zlink 1.3 STREAM socket is server-only): {e.Message}");
        }
    }

    /// <summary>Receives one [routing id][payload] message within the deadline.</summary>
    public static (RoutingId Id, byte[] Payload) Receive(ZlinkSocket socket, TimeSpan? timeout = null)
    {
        byte[] id = Wait.Frame(socket, timeout);
        Assert.That(socket.ReceiveMore, Is.True, "a STREAM message starts with its routing id frame");
        byte[] payload = Wait.Frame(socket, timeout);
        Assert.That(socket.ReceiveMore, Is.False, "a STREAM message has exactly two frames");
        return (new RoutingId(id), payload);
    }

    /// <summary>Receives the next message and checks it is the one-byte event <paramref name="expected"/>.</summary>
    public static RoutingId ReceiveEvent(ZlinkSocket socket, byte expected)
    {
        (RoutingId id, byte[] payload) = Receive(socket);
        Assert.That(payload, Is.EqualTo(new[] { expected }), expected == Connected ? "connect event 0x01" : "disconnect event 0x00");
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
