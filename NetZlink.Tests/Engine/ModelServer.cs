// A TCP echo server for the engine's model-based test, whose every connection reads at its own
// random pace: fast, in small slow reads, with pauses, and (some of them) ending with a reset.
// It checks each connection's byte stream as it goes: one connection index throughout, sequence
// numbers 0, 1, 2, ... without a gap, every byte as ModelPacket made it. The first violation is
// kept with the connection, so a stray byte anywhere fails the test with the stream's position.
// It speaks tcp, tls (SslStream with the test CA's server certificate), ws (the stress tool's
// WebSocket upgrade and byte stream over System.Net.WebSockets) or wss (both), so the same model
// runs over every transport the engine has.
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using NetZlink.Stress.WebSockets;

namespace NetZlink.Tests.Engine;

internal sealed class ModelServer : IDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly List<Peer> _peers = new();
    private readonly Thread _acceptThread;
    private readonly int _seed;
    private readonly double _resetShare;
    private readonly string _transport;
    private readonly X509Certificate2? _certificate;
    private volatile bool _calm;
    private volatile bool _disposed;

    /// <param name="seed">The round's seed.</param>
    /// <param name="resetShare">The share of connections that end with a reset.</param>
    /// <param name="transport">tcp, tls, ws or wss.</param>
    /// <param name="certificates">The server certificate for tls and wss.</param>
    public ModelServer(int seed, double resetShare, string transport = "tcp", TestCertificates? certificates = null)
    {
        _seed = seed;
        _resetShare = resetShare;
        _transport = transport;
        if (transport is "tls" or "wss")
        {
            ArgumentNullException.ThrowIfNull(certificates);
            using X509Certificate2 pem = X509Certificate2.CreateFromPemFile(certificates.ServerCert, certificates.ServerKey);
            _certificate = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), password: null);
        }

        _listener.Start(1024);
        _acceptThread = new Thread(AcceptLoop) { IsBackground = true, Name = "model-server-accept" };
        _acceptThread.Start();
    }

    public string Endpoint => $"{_transport}://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}";

    /// <summary>From now on every connection reads as fast as it can, with no pause and no reset.</summary>
    public void Calm() => _calm = true;

    public List<Peer> Peers
    {
        get
        {
            lock (_peers)
            {
                return _peers.ToList();
            }
        }
    }

    public void Dispose()
    {
        _disposed = true;
        _listener.Stop();
        _acceptThread.Join(TimeSpan.FromSeconds(5));
        foreach (Peer peer in Peers)
        {
            peer.Socket.Dispose();
            peer.Thread.Join(TimeSpan.FromSeconds(5));
        }

        _certificate?.Dispose();
    }

    /// <summary>The connection's byte stream: the socket itself, under TLS and/or a WebSocket as the transport asks; null when the upgrade was refused.</summary>
    private Stream? Open(System.Net.Sockets.Socket socket)
    {
        Stream stream = new NetworkStream(socket, ownsSocket: false);
        if (_certificate is not null)
        {
            var tls = new SslStream(stream, leaveInnerStreamOpen: false);
            tls.AuthenticateAsServer(new SslServerAuthenticationOptions { ServerCertificate = _certificate });
            stream = tls;
        }

        if (_transport is "ws" or "wss")
        {
            System.Net.WebSockets.WebSocket? ws = WebSocketHandshake.AcceptAsync(stream, WebSocketHandshake.DefaultPath, CancellationToken.None).GetAwaiter().GetResult();
            return ws is null ? null : new WebSocketByteStream(ws);
        }

        return stream;
    }

    private void AcceptLoop()
    {
        int accepted = 0;
        while (!_disposed)
        {
            System.Net.Sockets.Socket socket;
            try
            {
                socket = _listener.AcceptSocket();
            }
            catch (SocketException)
            {
                return;
            }
            catch (ObjectDisposedException)
            {
                return;
            }

            socket.NoDelay = true;
            socket.ReceiveBufferSize = 4096;
            socket.SendBufferSize = 65536;
            var random = new Random(_seed + (++accepted * 7919));
            var peer = new Peer(socket, random, random.NextDouble() < _resetShare);
            peer.Thread = new Thread(() => Serve(peer)) { IsBackground = true, Name = $"model-server-{accepted}" };
            lock (_peers)
            {
                _peers.Add(peer);
            }

            peer.Thread.Start();
        }
    }

    private void Serve(Peer peer)
    {
        Random random = peer.Random;
        byte[] buffer = new byte[256 * 1024];
        int filled = 0;
        // Each connection's own pace: how often it pauses and how much it reads at a time.
        double pauseChance = random.NextDouble() * 0.3;
        // A staller stops reading for a long while now and then: its client meets the high-water mark.
        bool staller = random.Next(3) == 0;
        int maxRead = random.Next(2) == 0 ? random.Next(1, 64) : 64 * 1024;
        int resetAfter = peer.WillReset ? random.Next(1, 400) : int.MaxValue;
        try
        {
            Stream? stream = Open(peer.Socket);
            if (stream is null)
            {
                peer.Fail("the WebSocket upgrade was refused");
                return;
            }

            while (!_disposed)
            {
                bool calm = _calm;
                if (!calm && random.NextDouble() < pauseChance)
                {
                    Thread.Sleep(staller && random.Next(8) == 0 ? random.Next(200, 1000) : random.Next(1, 120));
                }

                int want = Math.Min(calm ? 64 * 1024 : maxRead, buffer.Length - filled);
                int read = stream.Read(buffer, filled, want);
                if (read == 0)
                {
                    return;
                }

                filled += read;
                int used = 0;
                while (filled - used >= 4)
                {
                    int length = 4 + (int)BinaryPrimitives.ReadUInt32BigEndian(buffer.AsSpan(used));
                    if (length > buffer.Length || length < ModelPacket.MinLength)
                    {
                        peer.Fail($"a header announcing {length} bytes at stream offset {peer.Bytes + used}: {Convert.ToHexString(buffer.AsSpan(used, Math.Min(16, filled - used)))}");
                        return;
                    }

                    if (filled - used < length)
                    {
                        break;
                    }

                    ReadOnlySpan<byte> packet = buffer.AsSpan(used, length);
                    string? problem = ModelPacket.Check(packet, peer.Index < 0 ? null : peer.Index, peer.Packets);
                    if (problem is not null)
                    {
                        peer.Fail($"{problem} at stream offset {peer.Bytes + used}");
                        return;
                    }

                    peer.Index = ModelPacket.IndexOf(packet);
                    peer.Packets++;
                    stream.Write(packet);
                    used += length;
                    if (!_calm && peer.Packets >= resetAfter)
                    {
                        peer.Socket.LingerState = new LingerOption(true, 0);
                        peer.WasReset = true;
                        peer.Socket.Close();
                        return;
                    }
                }

                peer.Bytes += used;
                buffer.AsSpan(used, filled - used).CopyTo(buffer);
                filled -= used;
            }
        }
        catch (Exception e) when (e is SocketException or IOException or System.Security.Authentication.AuthenticationException)
        {
            // the client closed or reset the connection
        }
        catch (ObjectDisposedException)
        {
        }
    }

    internal sealed class Peer(System.Net.Sockets.Socket socket, Random random, bool willReset)
    {
        public System.Net.Sockets.Socket Socket { get; } = socket;

        public Random Random { get; } = random;

        public bool WillReset { get; } = willReset;

        public Thread Thread { get; set; } = null!;

        /// <summary>The engine connection this stream belongs to (-1 before its first packet).</summary>
        public volatile int Index = -1;

        /// <summary>Whole packets received (and echoed).</summary>
        public long Packets;

        public long Bytes;

        public volatile bool WasReset;

        public string? Violation { get; private set; }

        public void Fail(string what) => Violation ??= $"server stream of connection {Index} after {Packets} packets: {what}";
    }
}

/// <summary>The test's packet: [u32 BE body length][u32 connection index][u32 sequence][filler from both].</summary>
internal static class ModelPacket
{
    public const int MinLength = 12;

    public static int Write(Span<byte> destination, int index, long sequence, int fillerLength)
    {
        int length = MinLength + fillerLength;
        BinaryPrimitives.WriteUInt32BigEndian(destination, (uint)(length - 4));
        BinaryPrimitives.WriteInt32BigEndian(destination[4..], index);
        BinaryPrimitives.WriteUInt32BigEndian(destination[8..], (uint)sequence);
        for (int i = 0; i < fillerLength; i++)
        {
            destination[MinLength + i] = Filler(index, sequence, i);
        }

        return length;
    }

    public static int IndexOf(ReadOnlySpan<byte> packet) => BinaryPrimitives.ReadInt32BigEndian(packet[4..]);

    /// <summary>Null when the packet is the expected one (of <paramref name="index"/>, when known, with <paramref name="sequence"/>); else what is wrong.</summary>
    public static string? Check(ReadOnlySpan<byte> packet, int? index, long sequence)
    {
        if (packet.Length < MinLength)
        {
            return $"a packet of {packet.Length} bytes";
        }

        int got = IndexOf(packet);
        if (index is int expected && got != expected)
        {
            return $"a packet of connection {got} in the stream of connection {expected}";
        }

        uint seq = BinaryPrimitives.ReadUInt32BigEndian(packet[8..]);
        if (seq != (uint)sequence)
        {
            return $"sequence {seq} where {sequence} was due";
        }

        for (int i = MinLength; i < packet.Length; i++)
        {
            if (packet[i] != Filler(got, sequence, i - MinLength))
            {
                return $"byte {i} of packet {sequence} is {packet[i]:x2}, not {Filler(got, sequence, i - MinLength):x2}";
            }
        }

        return null;
    }

    private static byte Filler(int index, long sequence, int i) => (byte)((index * 131) + (sequence * 17) + (i * 7) + (i >> 8));
}
