// zlink messages: sized and copied messages, move and copy, metadata, and zero-copy messages
// whose release callback runs exactly once, even under GC pressure.
using System.Runtime.InteropServices;

namespace NetZlink.Tests;

public sealed class MessageTests : ContextTest
{
    [Test, CancelAfter(10_000)]
    public void SendAndReceive_Message_RoundTrips_AndLeavesTheSentMessageEmpty()
    {
        var (receiver, sender) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        // Socket-Type travels in READY only when the sender sets ZMP_METADATA, as in zlink 1.3
        sender.SetOption(SocketOption.ZmpMetadata, true);
        sender.Connect(Endpoints.BindFresh(receiver, "tcp"));

        using var outgoing = new ZlinkMessage(Wait.Bytes("hello message"));
        Assert.That(outgoing.Size, Is.EqualTo(13));
        sender.Send(outgoing);
        Assert.That(outgoing.Size, Is.Zero, "a sent message is left empty");

        using var incoming = new ZlinkMessage();
        Assert.That(receiver.TryReceive(incoming, Wait.Long), Is.True);
        Assert.That(Wait.Text(incoming.ToArray()), Is.EqualTo("hello message"));
        Assert.That(incoming.More, Is.False);
        Assert.That(incoming.GetMetadata("Socket-Type"), Is.EqualTo("PAIR"));
        Assert.That(incoming.GetMetadata("No-Such-Property"), Is.Null);
    }

    [Test]
    public void SizedMessage_IsWritableInPlace()
    {
        using var message = new ZlinkMessage(4);
        message.Data.Fill(7);
        Assert.That(message.ToArray(), Is.EqualTo(new byte[] { 7, 7, 7, 7 }));
    }

    [Test]
    public void MoveAndCopy_TransferContent()
    {
        using var source = new ZlinkMessage(Wait.Bytes("abc"));
        using var copy = new ZlinkMessage();
        using var moved = new ZlinkMessage(Wait.Bytes("old content"));

        source.CopyTo(copy);
        Assert.That(Wait.Text(copy.ToArray()), Is.EqualTo("abc"));
        Assert.That(Wait.Text(source.ToArray()), Is.EqualTo("abc"));

        source.MoveTo(moved);
        Assert.That(Wait.Text(moved.ToArray()), Is.EqualTo("abc"));
        Assert.That(source.Size, Is.Zero);
    }

    [Test]
    public void CopyTo_Itself_KeepsTheContent_UntilDisposed()
    {
        var message = new ZlinkMessage(Wait.Bytes("abc"));
        message.CopyTo(message);
        Assert.That(Wait.Text(message.ToArray()), Is.EqualTo("abc"));
        Assert.That(message.IsShared, Is.False, "nothing was copied, so nothing is shared");

        message.Dispose();
        Assert.Throws<ObjectDisposedException>(() => message.CopyTo(message));
    }

    [Test]
    public void MoveTo_Itself_KeepsTheContent_UntilDisposed()
    {
        var message = new ZlinkMessage(Wait.Bytes("abc"));
        message.MoveTo(message);
        Assert.That(Wait.Text(message.ToArray()), Is.EqualTo("abc"));

        message.Dispose();
        Assert.Throws<ObjectDisposedException>(() => message.MoveTo(message));
    }

    [Test, CancelAfter(10_000)]
    public void ZeroCopyMessage_CopiedAndMovedOntoItself_IsStillSent_AndReleasedOnce()
    {
        var (receiver, sender) = ConnectedPairs("inproc");

        int calls = 0;
        byte[] array = Wait.Bytes("zero-copy");
        using (var message = ZlinkMessage.FromArray(array, _ => Interlocked.Increment(ref calls)))
        {
            message.CopyTo(message);
            message.MoveTo(message);
            sender.Send(message);
        }

        Assert.That(Wait.Frame(receiver), Is.EqualTo(array));
        Wait.Until(() => Volatile.Read(ref calls) == 1, "the release callback");
        Assert.That(calls, Is.EqualTo(1));
    }

    [Test]
    public void Message_AfterDispose_ThrowsObjectDisposed()
    {
        var message = new ZlinkMessage(8);
        message.Dispose();
        message.Dispose();
        Assert.That(message.IsDisposed, Is.True);
        Assert.Throws<ObjectDisposedException>(() => _ = message.Size);
    }

    [Test]
    public void ZeroCopy_NeverSent_IsReleasedOnceAtDispose()
    {
        int calls = 0;
        byte[] array = new byte[32];
        var message = ZlinkMessage.FromArray(array, 4, 8, released =>
        {
            Assert.That(released, Is.SameAs(array));
            Interlocked.Increment(ref calls);
        });
        Assert.That(message.Size, Is.EqualTo(8));
        Assert.That(calls, Is.Zero);

        message.Dispose();
        message.Dispose();
        Assert.That(calls, Is.EqualTo(1));
    }

    [Test]
    public unsafe void ZeroCopy_FromNative_FreesTheMemoryOnce()
    {
        int calls = 0;
        nint memory = (nint)NativeMemory.Alloc(16);
        new Span<byte>((void*)memory, 16).Fill(0x5A);
        using (var message = ZlinkMessage.FromNative(memory, 16, (data, state) =>
        {
            Assert.That(state, Is.EqualTo("state"));
            NativeMemory.Free((void*)data);
            Interlocked.Increment(ref calls);
        }, "state"))
        {
            Assert.That(message.Data.ToArray(), Is.All.EqualTo(0x5A));
        }

        Assert.That(calls, Is.EqualTo(1));
    }

    [TestCase("inproc"), TestCase("tcp"), CancelAfter(60_000)]
    public unsafe void ZeroCopy_ReleasesEachMessageExactlyOnce_UnderGcPressure(string transport)
    {
        const int count = 2000;
        int[] releaseCount = new int[count];

        var (receiver, sender) = ConnectedPairs(transport);

        var garbage = new List<byte[]>();
        using var incoming = new ZlinkMessage();
        for (int i = 0; i < count; i++)
        {
            int id = i;
            ZlinkMessage outgoing;
            if (i % 2 == 0)
            {
                byte[] array = new byte[64 + (i % 100)];
                BitConverter.TryWriteBytes(array, id);
                outgoing = ZlinkMessage.FromArray(array, released => Interlocked.Increment(ref releaseCount[BitConverter.ToInt32(released)]));
            }
            else
            {
                nint memory = (nint)NativeMemory.Alloc(64);
                *(int*)memory = id;
                outgoing = ZlinkMessage.FromNative(memory, 64, static (data, state) =>
                {
                    var counts = (int[])state!;
                    Interlocked.Increment(ref counts[*(int*)data]);
                    NativeMemory.Free((void*)data);
                }, releaseCount);
            }

            using (outgoing)
            {
                sender.Send(outgoing);
            }

            // Churn the heap so a missing pin or a collected callback would show up.
            garbage.Add(new byte[1024]);
            if (i % 200 == 0)
            {
                garbage.Clear();
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            }

            Assert.That(receiver.TryReceive(incoming, Wait.Long), Is.True);
            Assert.That(BitConverter.ToInt32(incoming.Data), Is.EqualTo(id), "payload intact after GC");
        }

        // The last frame received still references its zero-copy data until released.
        incoming.Dispose();
        receiver.Dispose();
        sender.Dispose();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Wait.Until(() => releaseCount.All(c => c >= 1), "every release callback");
        Thread.Sleep(50);
        Assert.That(releaseCount, Is.All.EqualTo(1), "each callback runs exactly once");
    }

    [Test]
    public void ZeroCopy_ThrowingCallback_DoesNotCrash()
    {
        var message = ZlinkMessage.FromArray(new byte[8], _ => throw new InvalidOperationException("from the callback"));
        Assert.DoesNotThrow(message.Dispose);
    }
}
