// STREAM framing at the binding, with plain .NET peers over tcp, tls, ws and wss (the transports
// the library has): what a zlink 1.3 STREAM socket documents (Length, the default: a received
// payload is one whole body, a sent payload goes out as [u32 BE length][payload]), a packet whose
// last byte comes late (delivered at once, whole), a one-byte body told from the connection
// events, Raw (bytes as they come, the last byte before the end before the disconnect event), and
// Batch (whole packets per payload; a first packet larger than the buffer comes again).
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using NetZlink.Stress.WebSockets;
using NetZlink.Tests.Engine;

namespace NetZlink.Tests;

public sealed class StreamFramingTests : ContextTest
{
    private static readonly string[] Transports = ["tcp", "tls", "ws", "wss"];

    [TestCaseSource(nameof(Transports)), CancelAfter(30_000)]
    public void TheSameServerCode_ReceivesAndSendsWhatZlink13Documents(string transport)
    {
        // No option of NetZlink's library: this runs unchanged on a zlink 1.3 library.
        using var server = StreamServer.Open(transport);
        using StreamPeer peer = server.Accept(out RoutingId id);

        peer.Write([0, 0, 0, 5, (byte)'h', (byte)'e', (byte)'l', (byte)'l', (byte)'o']);
        (RoutingId from, byte[] body) = StreamSockets.Receive(server.Socket);
        Assert.That(from, Is.EqualTo(id));
        Assert.That(Wait.Text(body), Is.EqualTo("hello"), "00 00 00 05 hello is received as hello");

        Assert.That(server.Socket.TrySendTo(id, "xyz"u8, Wait.Long), Is.True);
        Assert.That(peer.ReadExactly(7), Is.EqualTo(new byte[] { 0, 0, 0, 3, 0x78, 0x79, 0x7a }), "xyz is sent as 00 00 00 03 78 79 7a");

        Assert.That(server.Socket.CloseConnection(id), Is.True);
        Assert.That(StreamSockets.ReceiveEvent(server.Socket, StreamSockets.Disconnected), Is.EqualTo(id));
    }

    [TestCaseSource(nameof(Transports)), CancelAfter(30_000)]
    public void APacketWhoseLastByteIsLate_IsDeliveredWholeAtOnce_AndEchoed(string transport)
    {
        using var server = StreamServer.Open(transport);
        using StreamPeer peer = server.Accept(out RoutingId id);

        byte[] packet = [0, 0, 0, 10, .. "late body!"u8];
        peer.Write(packet.AsSpan(0, packet.Length - 1).ToArray());
        Wait.Nothing(server.Socket, TimeSpan.FromMilliseconds(300));
        var clock = Stopwatch.StartNew();
        peer.Write(packet.AsSpan(packet.Length - 1).ToArray());
        (RoutingId from, byte[] body) = StreamSockets.Receive(server.Socket);
        TestContext.Out.WriteLine($"{transport}: delivered {clock.Elapsed.TotalMilliseconds:0.0} ms after the last byte");
        Assert.That(from, Is.EqualTo(id));
        Assert.That(body, Is.EqualTo(packet[4..]), "the whole body, in one payload");
        Assert.That(clock.Elapsed, Is.LessThan(TimeSpan.FromMilliseconds(250)), "delivered as soon as the last byte is in");

        Assert.That(server.Socket.TrySendTo(id, body, Wait.Long), Is.True);
        Assert.That(peer.ReadExactly(packet.Length), Is.EqualTo(packet), "the echo, framed again");
    }

    [TestCaseSource(nameof(Transports)), CancelAfter(30_000)]
    [RequiresStreamFraming]
    public void AOneByteBody_IsDelivered_AndToldFromTheConnectionEvents(string transport)
    {
        using var server = StreamServer.Open(transport);
        using StreamPeer peer = server.Accept(out RoutingId id);
        Assert.That(server.Socket.StreamEvent, Is.EqualTo(StreamEventKind.Connected));

        peer.Write([0, 0, 0, 1, 0x00, 0, 0, 0, 1, 0x01]);
        foreach (byte expected in new byte[] { 0x00, 0x01 })
        {
            (RoutingId from, byte[] body) = StreamSockets.Receive(server.Socket);
            Assert.That(from, Is.EqualTo(id));
            Assert.That(body, Is.EqualTo(new[] { expected }), "a one-byte body, looking like an event");
            Assert.That(server.Socket.StreamEvent, Is.EqualTo(StreamEventKind.Data), "ZLINK_STREAM_EVENT tells it apart");
        }

        peer.Dispose();
        (RoutingId gone, byte[] end) = StreamSockets.Receive(server.Socket);
        Assert.That(gone, Is.EqualTo(id));
        Assert.That(end, Is.EqualTo(new byte[] { 0x00 }));
        Assert.That(server.Socket.StreamEvent, Is.EqualTo(StreamEventKind.Disconnected));
        Assert.That(server.Socket.StreamEventError, Is.EqualTo(ZlinkError.None).Or.EqualTo(ZlinkError.ECONNRESET), "an orderly end (or a reset)");
    }

    [TestCaseSource(nameof(Transports)), CancelAfter(30_000)]
    [RequiresStreamFraming]
    public void InRaw_TheLastByteBeforeTheEnd_ArrivesBeforeTheDisconnectEvent(string transport)
    {
        using var server = StreamServer.Open(transport, StreamFraming.Raw);
        using StreamPeer peer = server.Accept(out RoutingId id);

        peer.Write("raw bytes"u8.ToArray());
        Thread.Sleep(50);
        peer.Write("!"u8.ToArray()); // a lone byte, then the end
        peer.Dispose();

        var received = new List<byte>();
        while (true)
        {
            (RoutingId from, byte[] payload) = StreamSockets.Receive(server.Socket);
            Assert.That(from, Is.EqualTo(id));
            if (payload.Length == 0)
            {
                Assert.That(server.Socket.StreamEvent, Is.EqualTo(StreamEventKind.Disconnected), "a zero-length payload is an event");
                break;
            }

            Assert.That(server.Socket.StreamEvent, Is.EqualTo(StreamEventKind.Data));
            received.AddRange(payload);
        }

        Assert.That(Wait.Text([.. received]), Is.EqualTo("raw bytes!"), "every byte, the lone last one included, before the disconnect");
    }

    [Test, CancelAfter(30_000)]
    [RequiresStreamFraming]
    public void InBatch_PayloadsAreWholePackets_AndAFirstPacketLargerThanTheBufferComesAgain()
    {
        using var server = StreamServer.Open("tcp", StreamFraming.Batch);
        using StreamPeer peer = server.Accept(out RoutingId id);

        byte[] three = [0, 0, 0, 1, 7, 0, 0, 0, 2, 8, 9, 0, 0, 0, 3, 1, 2, 3];
        peer.Write(three[..7]);
        peer.Write(three[7..]);
        var received = new List<byte>();
        while (received.Count < three.Length)
        {
            (RoutingId from, byte[] batch) = StreamSockets.Receive(server.Socket);
            Assert.That(from, Is.EqualTo(id));
            Assert.That(batch.Length, Is.Not.EqualTo(1), "a data payload is never one byte");
            Assert.That(WholePackets(batch), Is.True, $"whole packets: {Convert.ToHexString(batch)}");
            received.AddRange(batch);
        }

        Assert.That(received, Is.EqualTo(three));

        // A packet larger than the buffer is not taken: the receive says its size, and the next
        // receive returns the same payload.
        byte[] large = new byte[4 + 5000];
        BinaryPrimitives.WriteUInt32BigEndian(large, 5000);
        large.AsSpan(4).Fill(0x42);
        peer.Write(large);
        byte[] idBuffer = new byte[16];
        byte[] small = new byte[1000];
        int size = 0;
        Wait.Until(() => ReceiveInto(server.Socket, idBuffer, small, out size) && size > 0, "the large packet's payload");
        Assert.That(size, Is.EqualTo(large.Length), "the size of the packet that does not fit");
        byte[] big = new byte[size];
        Assert.That(server.Socket.TryReceive(big, Wait.Long, out int again), Is.True, "the same payload, pending");
        Assert.That(again, Is.EqualTo(large.Length));
        Assert.That(big, Is.EqualTo(large));

        // A send must be whole packets with bodies of a byte or more; two packets go out as given.
        Assert.That(() => server.Socket.TrySendTo(id, new byte[] { 0, 0, 0, 5, 1 }), Throws.InstanceOf<ZlinkException>().With.Property("Error").EqualTo(ZlinkError.EINVAL));
        Assert.That(server.Socket.TrySendTo(id, three, Wait.Long), Is.True);
        Assert.That(peer.ReadExactly(three.Length), Is.EqualTo(three));
    }

    [Test, CancelAfter(30_000)]
    public void StreamOptions_BelongToStreamSockets_AndTheFramingIsSetBeforeBindOrConnect()
    {
        using var pair = Context.CreateSocket(ZlinkSocketType.Pair);
        Assert.That(() => pair.StreamFraming = StreamFraming.Raw, Throws.InvalidOperationException.With.Message.Contains("STREAM"));
        Assert.That(() => _ = pair.StreamEvent, Throws.InvalidOperationException);

        using var stream = Context.CreateSocket(ZlinkSocketType.Stream);
        if (NativeNeeds.StreamFramingMissing is not null)
        {
            var missing = Assert.Throws<ZlinkNotSupportedException>(() => stream.StreamFraming = StreamFraming.Raw)!;
            Assert.That(missing.Message, Does.Contain("zlink 1.3"));
            Assert.Ignore($"the rest {NativeNeeds.StreamFramingMissing}");
        }

        Assert.That(stream.StreamFraming, Is.EqualTo(StreamFraming.Length), "Length is the default");
        stream.StreamFraming = StreamFraming.Batch;
        Assert.That(stream.StreamFraming, Is.EqualTo(StreamFraming.Batch));
        StreamSockets.Bind(stream);
        var late = Assert.Throws<SocketOptionException>(() => stream.StreamFraming = StreamFraming.Raw)!;
        Assert.That(late.Error, Is.EqualTo(ZlinkError.EINVAL));
        Assert.That(late.Message, Does.Contain("before the socket's first Bind or Connect"));
        Assert.That(stream.StreamFraming, Is.EqualTo(StreamFraming.Batch));
    }

    private static bool ReceiveInto(ZlinkSocket socket, byte[] id, byte[] payload, out int size)
    {
        size = 0;
        if (!socket.TryReceive(id, TimeSpan.FromMilliseconds(100), out _))
        {
            return false;
        }

        Assert.That(socket.TryReceive(payload, Wait.Long, out size), Is.True);
        return true;
    }

    private static bool WholePackets(ReadOnlySpan<byte> batch)
    {
        while (batch.Length >= 4)
        {
            int length = 4 + (int)BinaryPrimitives.ReadUInt32BigEndian(batch);
            if (length > batch.Length)
            {
                return false;
            }

            batch = batch[length..];
        }

        return batch.IsEmpty;
    }

    /// <summary>A bound STREAM socket (with the test certificates for tls and wss) that .NET peers connect to.</summary>
    private sealed class StreamServer : IDisposable
    {
        private readonly ZlinkContext _context = new();
        private readonly TestCertificates? _certificates;
        private readonly string _transport;

        private StreamServer(string transport, StreamFraming framing)
        {
            _transport = transport;
            Socket = _context.CreateSocket(ZlinkSocketType.Stream);
            try
            {
                StreamSockets.UseFraming(Socket, framing);
                if (transport is "tls" or "wss")
                {
                    _certificates = TestCertificates.Create();
                    Socket.SetOption(SocketOption.TlsCert, _certificates.ServerCert);
                    Socket.SetOption(SocketOption.TlsKey, _certificates.ServerKey);
                }

                Socket.Bind($"{transport}://127.0.0.1:*");
                Port = new Uri(Socket.LastEndpoint).Port;
            }
            catch
            {
                Dispose();
                throw;
            }
        }

        public ZlinkSocket Socket { get; }

        public int Port { get; }

        public static StreamServer Open(string transport, StreamFraming framing = StreamFraming.Length)
        {
            Engine.EngineModelTests.RequireTransport(transport);
            return new StreamServer(transport, framing);
        }

        /// <summary>Connects a .NET peer and takes the socket's connect event for it.</summary>
        public StreamPeer Accept(out RoutingId id)
        {
            // The peer's TLS or WebSocket handshake needs the socket's answers, and a STREAM socket
            // makes progress only inside calls on it: connect on another thread while this one receives.
            Task<StreamPeer> connecting = Task.Run(() => StreamPeer.Connect(_transport, Port, _certificates));
            try
            {
                id = StreamSockets.ReceiveEvent(Socket, StreamSockets.Connected);
            }
            catch
            {
                connecting.ContinueWith(t => t.Result.Dispose(), TaskScheduler.Default);
                throw;
            }

            Assert.That(connecting.Wait(Wait.Long), Is.True, "the peer's connect");
            return connecting.Result;
        }

        public void Dispose()
        {
            Socket.Dispose();
            _context.Dispose();
            _certificates?.Dispose();
        }
    }

    /// <summary>A plain .NET client: TCP, under TLS (trusting the test CA) and/or a WebSocket as the transport asks.</summary>
    private sealed class StreamPeer : IDisposable
    {
        private readonly TcpClient _client;
        private readonly Stream _stream;

        private StreamPeer(TcpClient client, Stream stream)
        {
            _client = client;
            _stream = stream;
            if (_stream.CanTimeout)
            {
                _stream.ReadTimeout = 10_000;
            }
        }

        public static StreamPeer Connect(string transport, int port, TestCertificates? certificates)
        {
            var client = new TcpClient { NoDelay = true };
            try
            {
                client.Connect("127.0.0.1", port);
                Stream stream = client.GetStream();
                if (certificates is not null)
                {
                    var tls = new SslStream(stream, leaveInnerStreamOpen: false);
                    var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
                    policy.CustomTrustStore.Add(X509Certificate2.CreateFromPem(File.ReadAllText(certificates.Ca)));
                    tls.AuthenticateAsClient(new SslClientAuthenticationOptions { TargetHost = "localhost", CertificateChainPolicy = policy });
                    stream = tls;
                }

                if (transport is "ws" or "wss")
                {
                    System.Net.WebSockets.WebSocket ws = WebSocketHandshake.ConnectAsync(stream, "127.0.0.1", WebSocketHandshake.DefaultPath, Wait.Token).GetAwaiter().GetResult();
                    stream = new WebSocketByteStream(ws);
                }

                return new StreamPeer(client, stream);
            }
            catch
            {
                client.Dispose();
                throw;
            }
        }

        /// <summary>One write (over ws, one binary message).</summary>
        public void Write(byte[] bytes)
        {
            _stream.Write(bytes);
            _stream.Flush();
        }

        public byte[] ReadExactly(int count)
        {
            byte[] buffer = new byte[count];
            _stream.ReadExactly(buffer);
            return buffer;
        }

        /// <summary>Ends the connection the way its transport does (TLS close_notify, a WebSocket close), then closes TCP.</summary>
        public void Dispose()
        {
            try
            {
                _stream.Dispose();
            }
            catch (IOException)
            {
            }

            _client.Dispose();
        }
    }
}
