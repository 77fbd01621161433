// Two PAIR sockets bound and connected to each other, with one message each way already
// delivered, so a benchmark never measures the connection being made.
//
// Both high-water marks are 0 (no limit). The benchmarks keep at most one message in flight, so
// a limit never matters, but libzmq's does: the sender learns that the peer has read (its pipe
// credit) only when it processes its commands, which a busy sender does at most about once a
// millisecond. A tight loop with the default 1000 therefore stalls for the rest of that
// millisecond every 1000 messages (measured with benchmarks/native/inproc_loop.c: 580 ns/op and
// a million EAGAIN retries at 64 B, against 130-150 ns/op with no limit); that would time the
// throttle, not the calls. The C program sets the same options.
namespace NetZlink.Benchmarks;

internal sealed class SocketPair : IDisposable
{
    private static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(10);

    private SocketPair(ZlinkSocket server, ZlinkSocket client)
    {
        Server = server;
        Client = client;
    }

    /// <summary>The bound side.</summary>
    public ZlinkSocket Server { get; }

    /// <summary>The connecting side.</summary>
    public ZlinkSocket Client { get; }

    /// <summary>Opens a pair in <paramref name="context"/>; <paramref name="name"/> makes an inproc endpoint unique.</summary>
    public static SocketPair Open(ZlinkContext context, Transport transport, string name)
    {
        ZlinkSocket server = context.CreateSocket(ZlinkSocketType.Pair);
        ZlinkSocket client = context.CreateSocket(ZlinkSocketType.Pair);
        try
        {
            foreach (ZlinkSocket socket in new[] { server, client })
            {
                socket.SendHighWaterMark = 0;
                socket.ReceiveHighWaterMark = 0;
            }

            if (transport == Transport.Inproc)
            {
                server.Bind($"inproc://{name}");
                client.Connect($"inproc://{name}");
            }
            else
            {
                server.Bind("tcp://127.0.0.1:*");
                client.Connect(server.LastEndpoint);
            }

            var pair = new SocketPair(server, client);
            pair.Handshake();
            return pair;
        }
        catch
        {
            client.Dispose();
            server.Dispose();
            throw;
        }
    }

    public void Dispose()
    {
        Client.Dispose();
        Server.Dispose();
    }

    private void Handshake()
    {
        Span<byte> probe = stackalloc byte[1];
        Client.Send(probe);
        if (!Server.TryReceive(probe, HandshakeTimeout, out _))
        {
            throw new TimeoutException("The PAIR server received nothing from its client within 10 s.");
        }

        Server.Send(probe);
        if (!Client.TryReceive(probe, HandshakeTimeout, out _))
        {
            throw new TimeoutException("The PAIR client received nothing from its server within 10 s.");
        }
    }
}
