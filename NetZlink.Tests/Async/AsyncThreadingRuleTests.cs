// The async threading rule: a socket runs one async receive and one async send at a time (they
// may wait together: full duplex); a second operation of the same direction before the first was
// awaited is refused with InvalidOperationException, and so is every other call on the socket
// (sync sends and receives, options, polls) while an async operation waits. Refused calls have no
// effect, and the waiting operation still completes.
namespace NetZlink.Tests.Async;

[CancelAfter(30_000)]
public sealed class AsyncThreadingRuleTests : ContextTest
{
    [Test]
    public async Task SecondReceiveAsync_BeforeTheFirstIsAwaited_IsRefused_AndTheFirstStillWorks()
    {
        var (server, client) = ConnectedPairs("inproc");
        byte[] first = new byte[8];
        ValueTask<int> waiting = server.ReceiveAsync(first);
        var refused = Assert.Throws<InvalidOperationException>(() => server.ReceiveAsync(new byte[8]).AsTask());
        Assert.That(refused!.Message, Does.Contain("another receive operation is still in progress"));
        Assert.Throws<InvalidOperationException>(() => server.ReceiveMultipartAsync().AsTask());

        client.Send("x"u8);
        Assert.That(await AsyncTestSupport.Within(waiting, "the first receive"), Is.EqualTo(1));
        Assert.That(first[0], Is.EqualTo((byte)'x'));
    }

    [Test]
    public async Task ReadingTheResultOfAWaitingReceive_IsRefused_AndTheReceiveKeepsItsBufferAndItsMessage()
    {
        var (server, client) = ConnectedPairs("inproc");
        byte[] buffer = new byte[8];
        ValueTask<int> waiting = server.ReceiveAsync(buffer);
        var refused = Assert.Throws<InvalidOperationException>(() => _ = waiting.Result);
        Assert.That(refused!.Message, Does.Contain("has not completed yet"));

        client.Send("m1"u8);
        Assert.That(await AsyncTestSupport.Within(waiting, "the receive whose Result was read too early"), Is.EqualTo(2));
        Assert.That(buffer[..2], Is.EqualTo("m1"u8.ToArray()), "the message went into the waiting receive's buffer");

        client.Send("m2"u8);
        byte[] next = new byte[8];
        Assert.That(await AsyncTestSupport.Within(server.ReceiveAsync(next), "the next receive"), Is.EqualTo(2));
        Assert.That(next[..2], Is.EqualTo("m2"u8.ToArray()));
    }

    [Test]
    public async Task AwaitingAValueTaskTwice_IsRefusedWithTheLibrarysMessage()
    {
        var (server, client) = ConnectedPairs("inproc");
        ValueTask<int> waiting = server.ReceiveAsync(new byte[8]);
        client.Send("x"u8);
        Assert.That(await AsyncTestSupport.Within(waiting, "the receive"), Is.EqualTo(1));
        var twice = Assert.ThrowsAsync<InvalidOperationException>(async () => await waiting);
        Assert.That(twice!.Message, Does.Contain("may be consumed once"));
    }

    [Test]
    public async Task SyncCalls_WhileAnAsyncReceiveWaits_AreRefused_NamingThePendingOperation()
    {
        var (server, client) = ConnectedPairs("inproc");
        ValueTask<int> waiting = server.ReceiveAsync(new byte[8]);
        Assert.That(waiting.IsCompleted, Is.False);
        byte[] buffer = new byte[8];
        var refused = Assert.Throws<InvalidOperationException>(() => server.TryReceive(buffer, out _));
        Assert.That(refused!.Message, Does.Contain("has an async operation pending (TryReceive refused)"));
        Assert.Throws<InvalidOperationException>(() => server.Send("y"u8));
        Assert.Throws<InvalidOperationException>(() => _ = server.ReceiveHighWaterMark);
        var poller = new ZlinkPoller();
        poller.Add(server, PollEvents.PollIn);
        Assert.Throws<InvalidOperationException>(() => poller.Poll(TimeSpan.Zero));

        client.Send("z"u8);
        Assert.That(await AsyncTestSupport.Within(waiting, "the waiting receive"), Is.EqualTo(1));

        // Once nothing waits, sync calls work again.
        client.Send("w"u8);
        Assert.That(server.TryReceive(buffer, Wait.Long, out int size), Is.True);
        Assert.That(buffer[..size], Is.EqualTo("w"u8.ToArray()));
    }

    [Test]
    public async Task ReceiveAsyncAndSendAsync_WaitTogether_FullDuplex()
    {
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.TightPair(Context);
        using var serverOwned = server;
        using var clientOwned = client;

        // The client's send queue fills, so its next SendAsync waits; meanwhile it also waits to receive.
        (int sent, ValueTask sending) = await AsyncTestSupport.FillUntilSendWaits(client);
        byte[] answer = new byte[4];
        ValueTask<int> receiving = client.ReceiveAsync(answer);
        Assert.That(receiving.IsCompleted, Is.False);

        // The server drains and answers; both of the client's operations complete.
        byte[] buffer = new byte[4];
        for (int i = 0; i <= sent; i++)
        {
            await AsyncTestSupport.Within(server.ReceiveAsync(buffer), $"server receive {i}");
            Assert.That(buffer[0], Is.EqualTo((byte)i));
        }

        await AsyncTestSupport.Within(sending, "the waiting send");
        await AsyncTestSupport.Within(server.SendAsync("ok"u8.ToArray()), "server answer");
        Assert.That(await AsyncTestSupport.Within(receiving, "the waiting receive"), Is.EqualTo(2));
    }

    [Test]
    public void AsyncCall_WhileAnotherThreadIsInsideABlockingReceive_IsRefused()
    {
        var (server, client) = ConnectedPairs("inproc");
        using var inside = new ManualResetEventSlim();
        var blocking = Task.Factory.StartNew(() =>
        {
            inside.Set();
            return server.Receive(new byte[8]);
        }, TaskCreationOptions.LongRunning);
        inside.Wait(Wait.Token);
        Wait.Until(() => server.Handle.IsHeldByCurrentThread || IsRefused(server), "the blocking receive to take the socket");
        Assert.Throws<InvalidOperationException>(() => server.ReceiveAsync(new byte[8]).AsTask());

        client.Send("v"u8);
        Assert.That(blocking.Wait(Wait.Long), Is.True);
        Assert.That(blocking.Result, Is.EqualTo(1));
    }

    private static bool IsRefused(ZlinkSocket socket)
    {
        try
        {
            _ = socket.ReceiveHighWaterMark;
            return false;
        }
        catch (InvalidOperationException)
        {
            return true;
        }
    }
}
