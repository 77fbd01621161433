// Frames at the edges: 0, 1, 8191, 8192, 8193, 65536 bytes and 1 MiB, over inproc and tcp PAIR
// and STREAM (Length and Raw framing), each way, arrive byte for byte (random content, seeded). A
// receive buffer smaller than the frame gets the frame's start and its full size, as documented.
// A frame above MAXMSGSIZE on the receiver is dropped the way libzmq documents it (the tcp
// connection that carried it is closed, then re-made) and both sockets go on working; a STREAM
// body above MAXMSGSIZE ends its connection, with EMSGSIZE as the disconnect's cause.
namespace NetZlink.Tests;

public sealed class FrameSizeTests : ContextTest
{
    private const int MaxMessageSize = 1000;

    private static readonly int[] Sizes = [0, 1, 8191, 8192, 8193, 65536, 1024 * 1024];

    [TestCase("inproc")]
    [TestCase("tcp")]
    [CancelAfter(60_000)]
    public void PairFramesOfEdgeSizes_ArriveByteForByte_BothWays(string transport)
    {
        Random random = Fuzz.Random(out int seed);
        var (server, client) = ConnectedPairs(transport);
        using var message = new ZlinkMessage();
        foreach (int size in Sizes)
        {
            foreach ((ZlinkSocket from, ZlinkSocket to) in new[] { (client, server), (server, client) })
            {
                byte[] frame = Fuzz.Bytes(random, size);
                Assert.That(from.TrySend(frame, Wait.Long), Is.True, $"seed {seed}: send {size} B");
                Assert.That(to.TryReceive(message, Wait.Long), Is.True, $"seed {seed}: receive {size} B");
                Assert.That(message.Size, Is.EqualTo(size));
                Assert.That(message.Data.SequenceEqual(frame), Is.True, $"seed {seed}: the {size} B frame arrived changed");
            }
        }
    }

    [TestCase(8192, 8191)]
    [TestCase(8193, 8192)]
    [TestCase(65536, 1)]
    [TestCase(1, 0)]
    [CancelAfter(30_000)]
    public void BufferSmallerThanTheFrame_GetsItsStart_AndItsFullSize(int size, int bufferSize)
    {
        Random random = Fuzz.Random(out int seed);
        var (server, client) = ConnectedPairs("inproc");
        byte[] frame = Fuzz.Bytes(random, size);
        byte[] buffer = new byte[bufferSize];

        Assert.That(client.TrySend(frame, Wait.Long), Is.True);
        Assert.That(server.TryReceive(buffer, Wait.Long, out int received), Is.True);
        Assert.That(received, Is.EqualTo(size), "the full size, larger than the buffer");
        Assert.That(buffer, Is.EqualTo(frame[..bufferSize]), $"seed {seed}: the start of the frame");
        Assert.That(client.TrySend(Wait.Bytes("next"), Wait.Long), Is.True);
        Assert.That(Wait.Text(Wait.Frame(server)), Is.EqualTo("next"), "the rest of the truncated frame is gone, the next frame is whole");
    }

    [Test, CancelAfter(60_000)]
    public void StreamPayloadsOfEdgeSizes_ArriveByteForByte_BothWays([Values(StreamFraming.Length, StreamFraming.Raw)] StreamFraming framing)
    {
        Random random = Fuzz.Random(out int seed);
        using var pair = ConnectedPair.Open(Context, ZlinkSocketType.Stream, "tcp", beforeConnecting: (socket, _) => StreamSockets.UseFraming(socket, framing));
        (ZlinkSocket client, RoutingId clientSide, ZlinkSocket server, RoutingId serverSide) = (pair.First, pair.FirstSide, pair.Second, pair.SecondSide);

        // Length (the default): every payload arrives whole, as one payload. Raw: TCP keeps no
        // boundaries, so what must arrive is the byte stream; nothing is held back, a lone byte
        // included. A 0-byte payload would close the connection: it comes last. In Length a
        // one-byte payload 0x00 closes too (zlink's rule), so the one-byte payloads here are not 0x00.
        foreach ((ZlinkSocket from, RoutingId fromId, ZlinkSocket to, RoutingId toId) in new[] { (client, clientSide, server, serverSide), (server, serverSide, client, clientSide) })
        {
            var sent = new List<byte>();
            foreach (int size in Sizes.Where(size => size > 0))
            {
                byte[] payload = Fuzz.Bytes(random, size);
                if (payload is [0])
                {
                    payload[0] = 0x5A;
                }

                StreamSockets.Send(from, fromId, payload);
                if (framing == StreamFraming.Length)
                {
                    (RoutingId id, byte[] body) = StreamSockets.Receive(to);
                    Assert.That(id, Is.EqualTo(toId));
                    Assert.That(body.SequenceEqual(payload), Is.True, $"seed {seed}: the {size}-byte body arrived changed or cut");
                }

                sent.AddRange(payload);
            }

            if (framing == StreamFraming.Raw)
            {
                Assert.That(ReceiveStreamBytes(to, toId, sent.Count, $"seed {seed}, {from} to {to}").SequenceEqual(sent), Is.True,
                    $"seed {seed}: the {sent.Count} bytes arrived changed");
            }
        }

        StreamSockets.Send(client, clientSide, []);
        Assert.That(StreamSockets.ReceiveEvent(server, StreamSockets.Disconnected), Is.EqualTo(serverSide), "a 0-byte payload closes the connection");
        Assert.That(StreamSockets.ReceiveEvent(client, StreamSockets.Disconnected), Is.EqualTo(clientSide));

        // Both sockets go on: a new connection carries data.
        StreamSockets.ConnectOrIgnore(client, server.LastEndpoint);
        RoutingId again = StreamSockets.ReceiveEvent(client, StreamSockets.Connected);
        RoutingId serverAgain = StreamSockets.ReceiveEvent(server, StreamSockets.Connected);
        StreamSockets.Send(client, again, Wait.Bytes("again"));
        Assert.That(Wait.Text(ReceiveStreamBytes(server, serverAgain, 5, "after the close")), Is.EqualTo("again"));
    }

    [Test, CancelAfter(60_000)]
    public void FrameAboveMaxMessageSize_OverTcpPair_IsDropped_AndTheSocketsGoOn()
    {
        Random random = Fuzz.Random(out int seed);
        var (receiver, sender) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        receiver.MaxMessageSize = MaxMessageSize;
        sender.SetOption(SocketOption.ReconnectInterval, 20);
        sender.Connect(Endpoints.BindFresh(receiver, "tcp"));
        using var monitor = receiver.OpenMonitor(MonitorEvents.Disconnected);
        using var message = new ZlinkMessage();

        byte[] largest = Fuzz.Bytes(random, MaxMessageSize);
        Assert.That(sender.TrySend(largest, Wait.Long), Is.True);
        Assert.That(receiver.TryReceive(message, Wait.Long), Is.True, "a frame of exactly MAXMSGSIZE is accepted");
        Assert.That(message.Data.SequenceEqual(largest), Is.True, $"seed {seed}");

        Assert.That(sender.TrySend(Fuzz.Bytes(random, MaxMessageSize + 1), Wait.Long), Is.True, "the sender queues it");
        Wait.Until(() => monitor.TryReceive(out _), "the receiver dropping the connection that carried the oversized frame");
        Wait.Nothing(receiver, TimeSpan.FromMilliseconds(300));

        // The sender re-connects on its own; frames within the limit flow again, both ways. Frames
        // sent before the new connection is up may wait in the sender's queue: keep sending until
        // one arrives, then check that what arrives is whole.
        byte[] after = Fuzz.Bytes(random, MaxMessageSize);
        Wait.Until(() => sender.TrySend(after) && receiver.TryReceive(message, TimeSpan.FromMilliseconds(100)), "a frame after the drop");
        Assert.That(message.Data.SequenceEqual(after), Is.True, $"seed {seed}: the frame after the drop arrived changed");
        Assert.That(receiver.TrySend(Wait.Bytes("reply"), Wait.Long), Is.True);
        Assert.That(Wait.Text(Wait.Frame(sender)), Is.EqualTo("reply"));
    }

    [Test, CancelAfter(30_000)]
    public void MaxMessageSize_OnStream_EndsTheConnectionOfALongerBody_WithEmsgsize()
    {
        Random random = Fuzz.Random(out int seed);
        using var pair = ConnectedPair.Open(Context, ZlinkSocketType.Stream, "tcp", beforeConnecting: (socket, _) => socket.MaxMessageSize = MaxMessageSize);
        Assert.That(pair.Second.MaxMessageSize, Is.EqualTo(MaxMessageSize));

        byte[] largest = Fuzz.Bytes(random, MaxMessageSize);
        StreamSockets.Send(pair.First, pair.FirstSide, largest);
        (RoutingId id, byte[] body) = StreamSockets.Receive(pair.Second);
        Assert.That(id, Is.EqualTo(pair.SecondSide));
        Assert.That(body.SequenceEqual(largest), Is.True, $"seed {seed}: a body of exactly MAXMSGSIZE arrives whole");

        // One byte more: the receiver drops the connection as soon as it reads the length, and says why.
        StreamSockets.Send(pair.First, pair.FirstSide, Fuzz.Bytes(random, MaxMessageSize + 1));
        Assert.That(StreamSockets.ReceiveEvent(pair.Second, StreamSockets.Disconnected), Is.EqualTo(pair.SecondSide));
        Assert.That(pair.Second.StreamEvent, Is.EqualTo(StreamEventKind.Disconnected));
        Assert.That(pair.Second.StreamEventError, Is.EqualTo(ZlinkError.EMSGSIZE));
        Assert.That(StreamSockets.ReceiveEvent(pair.First, StreamSockets.Disconnected), Is.EqualTo(pair.FirstSide), "the sender sees the connection end");
    }

    /// <summary>Reads [id][bytes] messages from <paramref name="socket"/> until <paramref name="count"/> bytes of <paramref name="id"/> arrived.</summary>
    private static byte[] ReceiveStreamBytes(ZlinkSocket socket, RoutingId id, int count, string where)
    {
        var received = new List<byte>(count);
        using var message = new ZlinkMessage();
        while (received.Count < count)
        {
            Assert.That(socket.TryReceive(message, Wait.Long), Is.True, $"{where}: {received.Count} of {count} bytes arrived");
            Assert.That(new RoutingId(message.ToArray()), Is.EqualTo(id), $"{where}: bytes of another connection");
            Assert.That(socket.TryReceive(message, Wait.Long), Is.True, $"{where}: the payload after the routing id");
            received.AddRange(message.Data);
        }

        Assert.That(received, Has.Count.EqualTo(count), $"{where}: more bytes than were sent");
        return [.. received];
    }
}
