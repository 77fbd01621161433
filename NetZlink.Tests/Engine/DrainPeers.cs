// Pieces of the drain tests against raw TCP peers: the channel reader that collects connections,
// a peer's writer that streams packets to the engine, and a frame that names its connection and
// sequence (so a peer's bytes can be checked against what was accepted for it).
namespace NetZlink.Tests.Engine;

internal static class DrainPeers
{
    /// <summary>
    /// A started loopback listener whose accepted sockets have a small receive buffer: with a slow
    /// reader it keeps the engine's last frames in its kernel's send buffer when it closes.
    /// </summary>
    public static TcpListener SmallBufferListener(out int port)
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Server.ReceiveBufferSize = 8 * 1024;
        listener.Start();
        port = ((IPEndPoint)listener.LocalEndpoint).Port;
        return listener;
    }

    /// <summary>Reads the channel to its end (events disposed), adding each connected connection to <paramref name="ready"/>.</summary>
    public static Task CollectConnected(EngineChannel channel, ConcurrentBag<Connection> ready) => Task.Run(async () =>
    {
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Connected)
                {
                    ready.Add(e.Connection);
                }
            }
        }
    });

    /// <summary>A peer's writer: random packets of up to 512 bytes to the engine until <paramref name="stop"/> or the connection's end.</summary>
    public static Task WriteUntil(Socket socket, int seed, CancellationToken stop) => Task.Run(async () =>
    {
        var random = new Random(seed);
        byte[] packet = new byte[4 + 512];
        try
        {
            while (!stop.IsCancellationRequested)
            {
                int body = random.Next(1, 512);
                BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)body);
                await socket.SendAsync(packet.AsMemory(0, 4 + body), SocketFlags.None, stop);
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // the engine is gone, or the peer has stopped
        }
    }, CancellationToken.None);

    /// <summary>A length-prefixed frame whose body starts with its connection and sequence (at least 8 bytes of body).</summary>
    public static byte[] Body(int connection, int sequence, int length)
    {
        length = Math.Max(length, 8);
        byte[] packet = new byte[4 + length];
        BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)length);
        BinaryPrimitives.WriteInt32BigEndian(packet.AsSpan(4), connection);
        BinaryPrimitives.WriteInt32BigEndian(packet.AsSpan(8), sequence);
        for (int i = 12; i < packet.Length; i++)
        {
            packet[i] = (byte)(sequence + i);
        }

        return packet;
    }
}
