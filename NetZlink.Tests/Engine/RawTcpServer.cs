// A plain TCP server the engine tests control byte by byte: it accepts the engine's connections
// and lets a test write arbitrary splits, read what arrived, or hang up mid-packet.
namespace NetZlink.Tests.Engine;

internal sealed class RawTcpServer : IDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly List<System.Net.Sockets.Socket> _accepted = new();

    public RawTcpServer()
    {
        _listener.Start();
    }

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    public string Endpoint => $"tcp://127.0.0.1:{Port}";

    /// <summary>A loopback port nothing listens on now (one the OS gave a listener that is closed again).</summary>
    public static int ClosedPort()
    {
        using var probe = new RawTcpServer();
        return probe.Port;
    }

    /// <summary>Accepts the next connection (blocking, with a timeout).</summary>
    public System.Net.Sockets.Socket Accept(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        System.Net.Sockets.Socket socket = _listener.AcceptSocketAsync(cts.Token).AsTask().GetAwaiter().GetResult();
        socket.NoDelay = true;
        _accepted.Add(socket);
        return socket;
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes from <paramref name="socket"/>.</summary>
    public static byte[] ReadExactly(System.Net.Sockets.Socket socket, int count, TimeSpan timeout)
    {
        var buffer = new byte[count];
        int read = 0;
        socket.ReceiveTimeout = (int)timeout.TotalMilliseconds;
        while (read < count)
        {
            int n = socket.Receive(buffer, read, count - read, SocketFlags.None);
            if (n == 0)
            {
                throw new IOException($"the peer closed after {read} of {count} bytes");
            }

            read += n;
        }

        return buffer;
    }

    public void Dispose()
    {
        foreach (System.Net.Sockets.Socket socket in _accepted)
        {
            socket.Dispose();
        }

        _listener.Stop();
        _listener.Dispose();
    }
}
