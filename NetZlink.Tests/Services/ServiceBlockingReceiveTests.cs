// TryReceive(TimeSpan, out …), the synchronous read of a gateway, receiver or SPOT subscriber: the
// first reader that waits sleeps on the ROUTER's descriptor and receives on its own thread while
// the worker stands back; other synchronous readers, ReceiveAsync and the queue's own readers take
// from the same queue. Whoever takes a message, each arrives once; a wait ends with a message, its
// timeout or the end of the queue, never by a lost wake-up.
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(60_000)]
public sealed class ServiceBlockingReceiveTests
{
    private const int End = -2; // a sentinel: every message was taken

    // A long wait ends with a message: there is always one more coming (the sentinels at the end).
    private const string LostWakeUp = "a long wait ended with nothing although more was coming (a lost wake-up)";
    private static readonly TimeSpan Long = TimeSpan.FromSeconds(20);
    // The gateway's tick is made 1,000 s: a reply left in the socket by a hand-off between the
    // direct reader, the worker standing back and the async readers would wait for good (the test
    // times out). Senders and readers on threads of their own, each with its own random mix.
    // Readers on the caller's thread take the socket a batch at a time (SharedRouter.ReaderBatch):
    // also run with batches of one message, so nearly every drain stops at its bound.
    [TestCase(0)]
    [TestCase(1)]
    public async Task Replies_reach_a_random_mix_of_blocking_and_async_readers_once_each_without_the_workers_tick(int readerBatch)
    {
        using var batch = new ReaderBatchScope(readerBatch);
        Random random = Fuzz.Random(out _);
        int count = Fuzz.Iterations(4000);
        int senders = random.Next(1, 4);
        int readers = random.Next(1, 4);
        await using var services = await ServiceReceivePathTests.Services.StartAsync("blocking");
        ZlinkReceiver receiver = services.Receiver;
        await using var gateway = new ZlinkGateway(services.Context, services.Discovery, new GatewayOptions { TickMilliseconds = 1_000_000 });
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);

        // The receiver's side: one thread, TryReceive with random timeouts, sometimes ReceiveAsync.
        int echoSeed = random.Next();
        Task echo = OnThread(() =>
        {
            var r = new Random(echoSeed);
            while (!failed.IsCancellationRequested)
            {
                ServiceMessage? m;
                if (r.Next(10) == 0)
                {
                    try
                    {
                        m = receiver.ReceiveAsync(failed.Token).AsTask().GetAwaiter().GetResult();
                    }
                    catch (OperationCanceledException) when (failed.IsCancellationRequested)
                    {
                        return;
                    }
                }
                else if (!receiver.TryReceive(TimeSpan.FromMilliseconds(r.Next(3) == 0 ? 0 : r.Next(1, 50)), out m))
                {
                    continue;
                }

                using (m)
                {
                    Assert.That(receiver.Send(m.Peer, m[0]), Is.True);
                }
            }
        });

        await gateway.SendAsync("blocking", BitConverter.GetBytes(-1), failed.Token);
        Assert.That(gateway.TryReceive(TimeSpan.FromSeconds(20), out ServiceMessage? first), Is.True, "the first answer");
        first!.Dispose();

        int[] sendSeeds = [.. Enumerable.Range(0, senders).Select(_ => random.Next())];
        Task[] sending = [.. Enumerable.Range(0, senders).Select(t => OnThread(() =>
        {
            var r = new Random(sendSeeds[t]);
            for (int id = t; id < count; id += senders)
            {
                while (!gateway.TrySend("blocking", BitConverter.GetBytes(id)))
                {
                    Thread.Sleep(1);
                }

                if (r.Next(8) == 0)
                {
                    Thread.Sleep(r.Next(3)); // readers catch up and wait
                }
            }
        }))];

        var seen = new int[count];
        int got = 0;
        int[] readSeeds = [.. Enumerable.Range(0, readers).Select(_ => random.Next())];
        Task[] reading = [.. Enumerable.Range(0, readers).Select(t => OnThread(() =>
        {
            var r = new Random(readSeeds[t]);
            while (Volatile.Read(ref got) < count)
            {
                if (!ReadOne(r, gateway.Replies, gateway.ReceiveAsync, TryReceive, failed.Token, out ServiceMessage reply))
                {
                    continue;
                }

                using (reply)
                {
                    int id = BitConverter.ToInt32(reply[0]);
                    if (id == End)
                    {
                        return; // all taken: the last reader's sentinels release the others' long waits
                    }

                    Assert.That(id, Is.InRange(0, count - 1), "a reply to a request of this test");
                    Assert.That(Interlocked.Increment(ref seen[id]), Is.EqualTo(1), $"reply {id} arrives once");
                    if (Interlocked.Increment(ref got) == count)
                    {
                        for (int i = 0; i < readers; i++)
                        {
                            Assert.That(gateway.TrySend("blocking", BitConverter.GetBytes(End)), Is.True);
                        }
                    }
                }
            }
        }))];

        bool TryReceive(TimeSpan timeout, out ServiceMessage m)
        {
            bool got = gateway.TryReceive(timeout, out ServiceMessage? taken);
            m = taken!;
            return got;
        }

        Task all = Task.WhenAll([.. sending, .. reading]);
        await Task.WhenAny(all, echo);
        if (echo.IsCompleted)
        {
            await echo; // the receiver's side failed: its assertion is the test's
        }

        try
        {
            await all;
        }
        finally
        {
            await failed.CancelAsync();
        }

        Assert.That(seen.All(x => x == 1), Is.True, "every request answered once");
        while (gateway.TryReceive(TimeSpan.FromMilliseconds(50), out ServiceMessage? rest))
        {
            using (rest)
            {
                Assert.That(BitConverter.ToInt32(rest[0]), Is.EqualTo(End), "nothing more than was sent (and the sentinels)");
            }
        }

        await echo;
    }

    // A reader blocked without a limit is released by the end of the queue (dispose) with the
    // exception ReceiveAsync throws; a zero timeout only looks; bad timeouts are refused.
    [Test]
    public async Task A_blocked_reader_ends_with_the_queue_and_bad_timeouts_are_refused()
    {
        Random random = Fuzz.Random(out _);
        await using var services = await ServiceReceivePathTests.Services.StartAsync("blockend");
        var gateway = new ZlinkGateway(services.Context, services.Discovery);
        Assert.That(gateway.TryReceive(TimeSpan.Zero, out ServiceMessage? none), Is.False);
        Assert.That(none, Is.Null);
        Assert.Throws<ArgumentOutOfRangeException>(() => gateway.TryReceive(TimeSpan.FromMilliseconds(-2), out _));
        Assert.Throws<ArgumentOutOfRangeException>(() => gateway.TryReceive(TimeSpan.FromDays(30), out _));
        Assert.Throws<ArgumentOutOfRangeException>(() => services.Receiver.TryReceive(TimeSpan.FromMilliseconds(-2), out _));

        // One to three readers blocked at once (the first on the socket, the others counted), then dispose.
        int blocked = random.Next(1, 4);
        Task[] readers = [.. Enumerable.Range(0, blocked).Select(i => OnThread(() =>
            Assert.Throws<System.Threading.Channels.ChannelClosedException>(() => gateway.TryReceive(Timeout.InfiniteTimeSpan, out _))))];
        await Task.Delay(random.Next(0, 50), Wait.Token);
        await gateway.DisposeAsync();
        await Task.WhenAll(readers);
        Assert.Throws<System.Threading.Channels.ChannelClosedException>(() => gateway.TryReceive(TimeSpan.Zero, out _));

        Task receiverReader = OnThread(() =>
            Assert.Throws<System.Threading.Channels.ChannelClosedException>(() => services.Receiver.TryReceive(Timeout.InfiniteTimeSpan, out _)));
        await Task.Delay(random.Next(0, 50), Wait.Token);
        await services.Receiver.DisposeAsync();
        await receiverReader;
    }

    // A direct reader that stops reading: the worker takes the ROUTER again for async readers at
    // once (not after its stand-back time), with its tick made 1,000 s so only that hand-back can deliver.
    [TestCase(0)]
    [TestCase(1)]
    public async Task After_a_blocking_reader_leaves_async_readers_are_served_by_the_worker(int readerBatch)
    {
        using var batch = new ReaderBatchScope(readerBatch);
        Random random = Fuzz.Random(out _);
        int rounds = Math.Max(1, Fuzz.Iterations(3000) / 100);
        await using var services = await ServiceReceivePathTests.Services.StartAsync("handback");
        ZlinkReceiver receiver = services.Receiver;
        await using var gateway = new ZlinkGateway(services.Context, services.Discovery, new GatewayOptions { TickMilliseconds = 1_000_000 });
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
        Task echo = Task.Run(async () =>
        {
            while (true)
            {
                using ServiceMessage m = await receiver.ReceiveAsync(stop.Token);
                Assert.That(receiver.Send(m.Peer, m[0]), Is.True);
            }
        });

        for (int round = 0; round < rounds; round++)
        {
            if (random.Next(2) == 0)
            {
                // Two blocking readers wait (one on the socket, one counted); the first answer ends
                // one of them, which then reads no more; the other must still get the second.
                int first = 2 * round, second = 2 * round + 1;
                Task<int>[] both = [.. Enumerable.Range(0, 2).Select(i => OnThread(() =>
                {
                    Assert.That(gateway.TryReceive(Long, out ServiceMessage? m), Is.True, LostWakeUp);
                    using (m)
                    {
                        return BitConverter.ToInt32(m![0]);
                    }
                }))];
                await Task.Delay(random.Next(0, 3), Wait.Token);
                await gateway.SendAsync("handback", BitConverter.GetBytes(first), Wait.Token);
                Task<int> done = await Task.WhenAny(both);
                Assert.That(await done, Is.EqualTo(first));
                await gateway.SendAsync("handback", BitConverter.GetBytes(second), Wait.Token);
                Assert.That(await both[done == both[0] ? 1 : 0], Is.EqualTo(second));
                continue;
            }

            // A blocking read with nothing to take (the worker stands back), then an async read of an answer sent later.
            Assert.That(gateway.TryReceive(TimeSpan.FromMilliseconds(random.Next(0, 5)), out _), Is.False);
            Task<ServiceMessage> pending = gateway.ReceiveAsync(Wait.Token).AsTask();
            await Task.Delay(random.Next(0, 3), Wait.Token);
            await gateway.SendAsync("handback", BitConverter.GetBytes(round), Wait.Token);
            using ServiceMessage reply = await pending.WaitAsync(TimeSpan.FromSeconds(20), Wait.Token);
            Assert.That(BitConverter.ToInt32(reply[0]), Is.EqualTo(round));
        }

        await stop.CancelAsync();
        Assert.CatchAsync<OperationCanceledException>(async () => await echo);
    }

    // SPOT: publishes from random threads reach a subscriber read by a random mix of TryReceive,
    // ReceiveAsync and the queue, each once; dispose ends a blocked TryReceive.
    [Test]
    public async Task Spot_messages_reach_blocking_and_async_readers_once_each_and_dispose_ends_a_blocked_one()
    {
        Random random = Fuzz.Random(out _);
        int count = Fuzz.Iterations(3000);
        int publishers = random.Next(1, 4);
        int readers = random.Next(1, 4);
        using var context = new ZlinkContext();
        await using var a = new ZlinkSpotNode(context, SpotTests.FastNode());
        await using var b = new ZlinkSpotNode(context, SpotTests.FastNode());
        a.Bind("tcp://127.0.0.1:*");
        await b.ConnectPeerAsync(a.BoundEndpoint!);
        using ZlinkSpotPublisher pub = a.CreatePublisher();
        var sub = b.CreateSubscriber();
        sub.Subscribe("probe");
        await SpotTests.ProbeAsync(pub, sub, "probe");
        sub.Subscribe("t");
        await SpotTests.ProbeAsync(pub, sub, "probe");

        int[] pubSeeds = [.. Enumerable.Range(0, publishers).Select(_ => random.Next())];
        Task[] publishing = [.. Enumerable.Range(0, publishers).Select(t => OnThread(() =>
        {
            var r = new Random(pubSeeds[t]);
            for (int id = t; id < count; id += publishers)
            {
                pub.Publish("t", BitConverter.GetBytes(id));
                if (r.Next(16) == 0)
                {
                    Thread.Sleep(r.Next(3));
                }
            }
        }))];

        var seen = new int[count];
        int got = 0;
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
        int[] readSeeds = [.. Enumerable.Range(0, readers).Select(_ => random.Next())];
        Task[] reading = [.. Enumerable.Range(0, readers).Select(t => OnThread(() =>
        {
            var r = new Random(readSeeds[t]);
            while (Volatile.Read(ref got) < count)
            {
                if (!ReadOne(r, sub.Messages, sub.ReceiveAsync, sub.TryReceive, failed.Token, out SpotMessage m))
                {
                    continue;
                }

                using (m)
                {
                    Assert.That(m.Topic, Is.EqualTo("t"));
                    int id = BitConverter.ToInt32(m[0]);
                    if (id == End)
                    {
                        return; // all taken: the last reader's sentinels release the others' long waits
                    }

                    Assert.That(Interlocked.Increment(ref seen[id]), Is.EqualTo(1), $"message {id} arrives once");
                    if (Interlocked.Increment(ref got) == count)
                    {
                        for (int i = 0; i < readers; i++)
                        {
                            pub.Publish("t", BitConverter.GetBytes(End));
                        }
                    }
                }
            }
        }))];

        try
        {
            await Task.WhenAll([.. publishing, .. reading]);
        }
        finally
        {
            await failed.CancelAsync();
        }

        Assert.That(seen.All(x => x == 1), Is.True, "every message once");
        Assert.That(sub.Dropped, Is.Zero);
        while (sub.TryReceive(TimeSpan.FromMilliseconds(50), out SpotMessage rest))
        {
            using (rest)
            {
                Assert.That(BitConverter.ToInt32(rest[0]), Is.EqualTo(End), "nothing more than was published (and the sentinels)");
            }
        }

        Assert.Throws<ArgumentOutOfRangeException>(() => sub.TryReceive(TimeSpan.FromMilliseconds(-5), out _));

        Task blocked = OnThread(() =>
            Assert.Throws<System.Threading.Channels.ChannelClosedException>(() => sub.TryReceive(Timeout.InfiniteTimeSpan, out _)));
        await Task.Delay(random.Next(0, 50), Wait.Token);
        await sub.DisposeAsync();
        await blocked;
    }

    private delegate bool TryReceiveFunc<T>(TimeSpan timeout, out T item);

    /// <summary>One read by a random way: the queue's TryRead, ReceiveAsync for a short slice, or
    /// TryReceive with a random timeout (a long one must not end empty). False: nothing this time.</summary>
    private static bool ReadOne<T>(Random r, System.Threading.Channels.ChannelReader<T> queue,
        Func<CancellationToken, ValueTask<T>> receive, TryReceiveFunc<T> tryReceive, CancellationToken token, out T item)
    {
        token.ThrowIfCancellationRequested();
        switch (r.Next(10))
        {
            case 0:
                return queue.TryRead(out item!);
            case 1:
                using (var slice = CancellationTokenSource.CreateLinkedTokenSource(token))
                {
                    slice.CancelAfter(r.Next(1, 20));
                    try
                    {
                        item = receive(slice.Token).AsTask().GetAwaiter().GetResult();
                        return true;
                    }
                    catch (OperationCanceledException) when (!token.IsCancellationRequested)
                    {
                        item = default!;
                        return false;
                    }
                }

            default:
                TimeSpan timeout = RandomTimeout(r);
                bool got = tryReceive(timeout, out item);
                Assert.That(got || timeout < Long, Is.True, LostWakeUp);
                return got;
        }
    }

    /// <summary>Zero (a look), a few milliseconds, or <see cref="Long"/> (the wake-up must come).</summary>
    private static TimeSpan RandomTimeout(Random r) => r.Next(4) switch
    {
        0 => TimeSpan.Zero,
        1 => TimeSpan.FromMilliseconds(r.Next(1, 5)),
        2 => Long,
        _ => TimeSpan.FromMilliseconds(r.Next(5, 50)),
    };

    /// <summary>Runs <paramref name="work"/> on a thread of its own (a blocking reader does not belong on the pool).</summary>
    private static Task<T> OnThread<T>(Func<T> work)
    {
        var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        new Thread(() =>
        {
            try
            {
                done.SetResult(work());
            }
            catch (Exception e)
            {
                done.SetException(e);
            }
        }) { IsBackground = true }.Start();
        return done.Task;
    }

    private static Task<bool> OnThread(Action work) => OnThread(() =>
    {
        work();
        return true;
    });

    /// <summary>Sets <see cref="SharedRouter.ReaderBatch"/> for one test (0: the default) and puts it back.</summary>
    private sealed class ReaderBatchScope : IDisposable
    {
        private readonly int _saved = SharedRouter.ReaderBatch;

        public ReaderBatchScope(int batch)
        {
            if (batch > 0)
            {
                SharedRouter.ReaderBatch = batch;
            }
        }

        public void Dispose() => SharedRouter.ReaderBatch = _saved;
    }
}
