// Cancellation racing completion. Every operation ends exactly once, either with success or with
// OperationCanceledException, and nothing is lost or doubled:
// - receive: messages sent = messages received by successful ReceiveAsyncs + messages still
//   queued afterwards, in order (a cancelled receive never swallows a message);
// - send: the peer receives exactly the messages whose SendAsync succeeded, in order, each whole
//   (a cancelled multipart send queued none of its frames).
// The timings (cancel now, after a random delay, or never; send before, during or not at all) are
// random: NETZLINK_FUZZ_SEED replays the choices, NETZLINK_FUZZ_ITERATIONS sets the rounds.
namespace NetZlink.Tests.Async;

[CancelAfter(180_000)]
public sealed class AsyncCancellationRaceTests : ContextTest
{
    [TestCase("inproc"), TestCase("tcp")]
    public async Task CancelledReceive_NeverSwallowsAMessage(string transport)
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(400);
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.Pair(Context, transport);
        using var serverOwned = server;
        using var clientOwned = client;

        int sent = 0;
        var received = new List<int>();
        int cancelled = 0;
        byte[] buffer = new byte[4];
        for (int round = 0; round < rounds; round++)
        {
            using var cancel = new CancellationTokenSource();
            int plan = random.Next(4);
            if (plan == 0)
            {
                client.Send(BitConverter.GetBytes(sent++));
            }

            ValueTask<int> receiving = server.ReceiveAsync(buffer, cancel.Token);
            Task racer = Task.Run(async () =>
            {
                if (plan is 1 or 2)
                {
                    await Task.Delay(random.Next(3)).ConfigureAwait(false);
                }

                cancel.Cancel();
            });
            if (plan is 2 or 3)
            {
                client.Send(BitConverter.GetBytes(Interlocked.Increment(ref sent) - 1));
            }

            try
            {
                int size = await AsyncTestSupport.Within(receiving, $"seed {seed}, round {round}: ReceiveAsync");
                Assert.That(size, Is.EqualTo(4));
                received.Add(BitConverter.ToInt32(buffer, 0));
            }
            catch (OperationCanceledException)
            {
                cancelled++;
            }

            await racer;
        }

        // What no receive took is still queued, in order.
        while (server.TryReceive(buffer, TimeSpan.FromMilliseconds(200), out _))
        {
            received.Add(BitConverter.ToInt32(buffer, 0));
        }

        TestContext.Out.WriteLine($"seed {seed}: {rounds} rounds, {sent} sent, {received.Count} received, {cancelled} receives cancelled");
        Assert.That(received, Is.EqualTo(Enumerable.Range(0, sent)), $"seed {seed}: every message sent arrives exactly once, in order");
        Assert.That(cancelled, Is.GreaterThan(0), $"seed {seed}: no receive was cancelled, so the race was not exercised");
    }

    [TestCase(false), TestCase(true)]
    public async Task CancelledSend_SentTheWholeMessageOrNoneOfIt(bool multipart)
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(400);
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.TightPair(Context);
        using var serverOwned = server;
        using var clientOwned = client;

        var succeeded = new List<int>();
        var received = new List<List<byte[]>>();
        int cancelled = 0;
        for (int round = 0; round < rounds; round++)
        {
            using var cancel = new CancellationTokenSource();
            byte[] id = BitConverter.GetBytes(round);
            ValueTask sending = multipart
                ? client.SendMultipartAsync(new ReadOnlyMemory<byte>[] { id, Fuzz.Bytes(random, random.Next(0, 64)), id }, cancel.Token)
                : client.SendAsync(id, SendFlags.None, cancel.Token);

            // The reader drains a random number of messages (sometimes none) while the canceller races.
            int reads = random.Next(3);
            int delay = random.Next(3);
            Task racer = Task.Run(async () =>
            {
                await Task.Delay(delay).ConfigureAwait(false);
                cancel.Cancel();
            });
            for (int r = 0; r < reads; r++)
            {
                var parts = new List<byte[]>();
                if (server.TryReceiveMultipart(parts))
                {
                    received.Add(parts);
                }
            }

            Exception? outcome = await AsyncTestSupport.Outcome(sending, $"seed {seed}, round {round}: send");
            if (outcome is null)
            {
                succeeded.Add(round);
            }
            else if (outcome is OperationCanceledException)
            {
                cancelled++;
            }
            else
            {
                Assert.Fail($"seed {seed}, round {round}: the send ended with {outcome}");
            }

            await racer;
        }

        var rest = new List<byte[]>();
        while (server.TryReceiveMultipart(rest, TimeSpan.FromMilliseconds(200)))
        {
            received.Add(rest);
            rest = [];
        }

        TestContext.Out.WriteLine($"seed {seed}: {rounds} rounds, {succeeded.Count} sends succeeded, {cancelled} cancelled, {received.Count} messages received");
        Assert.That(received.Select(m => BitConverter.ToInt32(m[0], 0)), Is.EqualTo(succeeded), $"seed {seed}: the peer gets exactly the messages whose send succeeded, in order");
        Assert.That(received.All(m => m.Count == (multipart ? 3 : 1) && m[^1].SequenceEqual(m[0])), Is.True, $"seed {seed}: every message arrives whole");
        Assert.That(cancelled, Is.GreaterThan(0), $"seed {seed}: no send was cancelled, so the race was not exercised");
    }

    [Test]
    public async Task CancelAfter_IsTheAsyncTimeout_AndTheSocketStaysUsable()
    {
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.Pair(Context, "inproc");
        using var serverOwned = server;
        using var clientOwned = client;
        using var timeout = new CancellationTokenSource(TimeSpan.FromMilliseconds(50));
        byte[] buffer = new byte[8];
        var cancelled = Assert.CatchAsync<OperationCanceledException>(async () => await server.ReceiveAsync(buffer, timeout.Token));
        Assert.That(cancelled!.CancellationToken, Is.EqualTo(timeout.Token));

        client.Send("after"u8);
        int size = await AsyncTestSupport.Within(server.ReceiveAsync(buffer), "the next receive");
        Assert.That(buffer[..size], Is.EqualTo("after"u8.ToArray()));
    }

    [Test]
    public void AlreadyCancelledToken_FailsAtOnce_WithoutTouchingTheSocket()
    {
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.Pair(Context, "inproc");
        using var serverOwned = server;
        using var clientOwned = client;
        client.Send("kept"u8);
        Wait.Until(() => server.Events.HasFlag(PollEvents.PollIn), "the message to arrive");
        ValueTask<int> receiving = server.ReceiveAsync(new byte[8], new CancellationToken(canceled: true));
        Assert.That(receiving.IsCanceled, Is.True);
        Assert.That(Wait.Frame(server), Is.EqualTo("kept"u8.ToArray()), "the cancelled receive took nothing");
    }
}
