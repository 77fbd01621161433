// The hot path allocates nothing: steady-state TrySend / TryReceive on spans, measured with
// GC.GetAllocatedBytesForCurrentThread around a loop after warm-up, over inproc PAIR and over
// a STREAM pair. The measured figure is printed with the test output.
namespace NetZlink.Tests;

public sealed class AllocationTests : ContextTest
{
    private const int WarmUp = 20_000;
    private const int Measured = 20_000;

    [Test, CancelAfter(60_000)]
    public void TrySendTryReceive_OverInprocPair_AllocatesNothing()
    {
        var (receiver, sender) = ConnectedPairs("inproc");

        byte[] payload = new byte[256];
        byte[] buffer = new byte[256];
        PingPong(sender, receiver, payload, buffer, WarmUp);

        long before = GC.GetAllocatedBytesForCurrentThread();
        long received = PingPong(sender, receiver, payload, buffer, Measured);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        TestContext.Out.WriteLine($"inproc PAIR: {Measured} TrySend + TryReceive of {payload.Length} B ({received} B received) allocated {allocated} bytes");
        Assert.That(allocated, Is.Zero);
    }

    [Test, CancelAfter(60_000)]
    public void TrySendTryReceive_OverStreamPair_AllocatesNothing()
    {
        var (server, client) = Sockets(ZlinkSocketType.Stream, ZlinkSocketType.Stream);
        StreamSockets.ConnectOrIgnore(client, StreamSockets.Bind(server));
        RoutingId clientSide = StreamSockets.ReceiveEvent(client, StreamSockets.Connected);
        StreamSockets.ReceiveEvent(server, StreamSockets.Connected);

        byte[] id = clientSide.ToArray();
        byte[] payload = new byte[256];
        byte[] buffer = new byte[4096];
        StreamRoundTrips(client, server, id, payload, buffer, WarmUp);

        long before = GC.GetAllocatedBytesForCurrentThread();
        long received = StreamRoundTrips(client, server, id, payload, buffer, Measured);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        TestContext.Out.WriteLine($"STREAM pair: {Measured} x ([id] + {payload.Length} B payload) via TrySend, {received} B via TryReceive, allocated {allocated} bytes");
        Assert.That(allocated, Is.Zero);
    }

    [Test, CancelAfter(60_000)]
    public void Poll_AllocatesNothing()
    {
        var (a, b) = ConnectedPairs("inproc");
        var poller = new ZlinkPoller();
        poller.Add(a, PollEvents.PollIn);
        poller.Add(b, PollEvents.PollIn | PollEvents.PollOut);
        for (int i = 0; i < WarmUp; i++)
        {
            poller.Poll(0);
        }

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Measured; i++)
        {
            poller.Poll(0);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        TestContext.Out.WriteLine($"Poller: {Measured} polls allocated {allocated} bytes");
        Assert.That(allocated, Is.Zero);
    }

    private static long PingPong(ZlinkSocket sender, ZlinkSocket receiver, byte[] payload, byte[] buffer, int count)
    {
        long received = 0;
        for (int i = 0; i < count; i++)
        {
            while (!sender.TrySend(payload))
            {
            }

            int size;
            while (!receiver.TryReceive(buffer, out size))
            {
            }

            received += size;
        }

        return received;
    }

    // STREAM is a byte stream: payloads may arrive merged or split, so the loop keeps at most a
    // few sends in flight and counts bytes, not messages.
    private static long StreamRoundTrips(ZlinkSocket client, ZlinkSocket server, byte[] id, byte[] payload, byte[] buffer, int count)
    {
        long sentBytes = 0;
        long received = 0;
        for (int i = 0; i < count; i++)
        {
            while (!client.TrySend(id, SendFlags.SendMore))
            {
            }

            while (!client.TrySend(payload))
            {
            }

            sentBytes += payload.Length;
            while (received < sentBytes)
            {
                if (server.TryReceive(buffer, out _) && server.TryReceive(buffer, out int size))
                {
                    received += size;
                }
            }
        }

        return received;
    }
}
