// ReceiveAsync on a gateway or receiver takes what the socket holds on the caller's thread when its
// queue is empty, while the worker thread drains the same socket into the same queue: whichever
// thread takes a message, each arrives once, whole and in order.
using System.Buffers.Binary;
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(60_000)]
public sealed class ServiceReceivePathTests
{
    [Test]
    public async Task Messages_taken_by_the_caller_or_by_the_worker_arrive_once_whole_and_in_order()
    {
        Random random = Fuzz.Random(out _);
        int count = Fuzz.Iterations(3000);
        await using var services = await Services.StartAsync("order");
        ZlinkReceiver receiver = services.Receiver;
        await using var gateway = new ZlinkGateway(services.Context, services.Discovery);

        // The receiver's side: a random mix of ReceiveAsync (which may drain on this thread) and
        // reads of the queue the worker fills, with pauses that leave the draining to the worker.
        int seedForEcho = random.Next();
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
        Task echo = Task.Run(async () =>
        {
            var r = new Random(seedForEcho);
            for (int expect = 0; expect < count; expect++)
            {
                using ServiceMessage m = await Next(r, receiver.ReceiveAsync, receiver.Requests, failed.Token);
                Assert.That(m.PartCount, Is.EqualTo(PartsOf(expect)), $"request {expect}");
                Assert.That(BinaryPrimitives.ReadInt32LittleEndian(m[0]), Is.EqualTo(expect), "requests arrive once and in order");
                for (int p = 1; p < m.PartCount; p++)
                {
                    Assert.That(m[p].ToArray(), Is.EqualTo(Body(expect, p)), $"part {p} of request {expect}");
                }

                ReadOnlyMemory<byte>[] parts = new ReadOnlyMemory<byte>[m.PartCount];
                for (int p = 0; p < parts.Length; p++)
                {
                    parts[p] = m.GetPartMemory(p).ToArray();
                }

                Assert.That(receiver.Send(m.Peer, parts), Is.True);
            }
        });
        _ = echo.ContinueWith(_ => failed.Cancel(), CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);

        int sent = 0, got = 0;
        while (got < count)
        {
            // A random window of messages in flight, then a random number of replies taken.
            int window = random.Next(1, 300);
            while (sent < count && sent - got < window)
            {
                ReadOnlyMemory<byte>[] parts = new ReadOnlyMemory<byte>[PartsOf(sent)];
                parts[0] = BitConverter.GetBytes(sent);
                for (int p = 1; p < parts.Length; p++)
                {
                    parts[p] = Body(sent, p);
                }

                while (!gateway.TrySend("order", parts))
                {
                    await Task.Delay(1, failed.Token);
                }

                sent++;
            }

            for (int take = random.Next(1, sent - got + 1); take > 0; take--, got++)
            {
                ServiceMessage reply;
                try
                {
                    reply = await Next(random, gateway.ReceiveAsync, gateway.Replies, failed.Token);
                }
                catch (OperationCanceledException) when (echo.IsFaulted)
                {
                    await echo; // the receiver's side failed: its assertion is the test's
                    throw;
                }

                using var owned = reply;
                Assert.That(reply.Service, Is.EqualTo("order"));
                Assert.That(reply.PartCount, Is.EqualTo(PartsOf(got)), $"reply {got}");
                Assert.That(BinaryPrimitives.ReadInt32LittleEndian(reply[0]), Is.EqualTo(got), "replies arrive once and in order");
                for (int p = 1; p < reply.PartCount; p++)
                {
                    Assert.That(reply[p].ToArray(), Is.EqualTo(Body(got, p)), $"part {p} of reply {got}");
                }
            }
        }

        await echo;
        Assert.That(gateway.Replies.TryRead(out _), Is.False, "nothing more than was sent");
        Assert.That(receiver.Requests.TryRead(out _), Is.False, "nothing more than was sent");
    }

    [Test]
    public async Task A_cancelled_receive_takes_nothing_and_a_closed_gateway_says_so()
    {
        await using var services = await Services.StartAsync("cancel");
        ZlinkReceiver receiver = services.Receiver;
        var gateway = new ZlinkGateway(services.Context, services.Discovery);
        await gateway.SendAsync("cancel", "one"u8.ToArray(), Wait.Token);

        using (ServiceMessage request = await receiver.ReceiveAsync(Wait.Token))
        {
            Assert.That(receiver.Send(request.Peer, "reply"u8), Is.True);
        }

        // Wait until the reply is there (in the socket or the queue), then receive with a cancelled token.
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        while (!gateway.Replies.TryPeek(out _))
        {
            await Task.Delay(5, Wait.Token);
        }

        Assert.CatchAsync<OperationCanceledException>(async () => await gateway.ReceiveAsync(cancelled.Token));
        using (ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token))
        {
            Assert.That(reply[0].ToArray(), Is.EqualTo("reply"u8.ToArray()), "the cancelled receive took nothing");
        }

        await gateway.DisposeAsync();
        Assert.ThrowsAsync<System.Threading.Channels.ChannelClosedException>(async () => await gateway.ReceiveAsync(Wait.Token));
    }

    // A send whose token is cancelled before it begins sends nothing (its doc: "ends the wait;
    // then nothing was sent"), even when a receiver could take it at once.
    [Test]
    public async Task A_send_cancelled_before_it_begins_sends_nothing()
    {
        await using var services = await Services.StartAsync("cancelsend");
        await using var gateway = new ZlinkGateway(services.Context, services.Discovery);
        await gateway.SendAsync("cancelsend", "first"u8.ToArray(), Wait.Token); // the receiver is reachable
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();
        Assert.CatchAsync<OperationCanceledException>(async () => await gateway.SendAsync("cancelsend", "cancelled"u8.ToArray(), cancelled.Token));
        await gateway.SendAsync("cancelsend", "last"u8.ToArray(), Wait.Token);
        using (ServiceMessage first = await services.Receiver.ReceiveAsync(Wait.Token))
        {
            Assert.That(first[0].ToArray(), Is.EqualTo("first"u8.ToArray()));
        }

        using ServiceMessage next = await services.Receiver.ReceiveAsync(Wait.Token);
        Assert.That(next[0].ToArray(), Is.EqualTo("last"u8.ToArray()), "the cancelled send sent nothing");
    }

    // Disposing a receiver in a flood, while an async reader keeps finding requests (so it never
    // gives its thread-pool thread back) and the 2-core machine's pool is busy: the reader's queue
    // ends at once, on the disposing thread, so neither waits for the other. Before, DisposeAsync
    // ran its join on the pool and took up to 15 s here. The bound below is a hang bound only.
    [Test]
    public async Task Disposing_a_flooded_receiver_ends_its_busy_async_reader_and_returns()
    {
        Random random = Fuzz.Random(out _);
        await using var services = await Services.StartAsync("flood");
        ZlinkReceiver receiver = services.Receiver;
        await using var gateway = new ZlinkGateway(services.Context, services.Discovery);
        using var stop = new CancellationTokenSource();
        var flood = new Thread(() =>
        {
            byte[] body = new byte[random.Next(1, 64)];
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    gateway.TrySend("flood", body);
                }
                catch (ObjectDisposedException)
                {
                    return;
                }
            }
        }) { IsBackground = true };
        flood.Start();
        long read = 0;
        Task reader = Task.Run(async () =>
        {
            while (true)
            {
                using ServiceMessage m = await receiver.ReceiveAsync(CancellationToken.None);
                Interlocked.Increment(ref read);
            }
        });
        while (Interlocked.Read(ref read) < 10_000)
        {
            await Task.Delay(5, Wait.Token);
        }

        Task dispose = receiver.DisposeAsync().AsTask();
        Assert.That(await Task.WhenAny(dispose, Task.Delay(TimeSpan.FromSeconds(10), Wait.Token)), Is.SameAs(dispose), "DisposeAsync returned (a hang bound)");
        Assert.CatchAsync<System.Threading.Channels.ChannelClosedException>(async () => await reader, "the reader's queue ended with the dispose");
        await stop.CancelAsync();
        flood.Join();
    }

    // Sends do not look at the ROUTER's events (a system call) each time: a send may take the
    // wake-up the descriptor owed the worker, and then the look is made by whoever needs it (a send
    // while a reader waits, a reader that finds the queue empty). With the worker's own tick made
    // 1,000 s, a reply left behind by that scheme would wait for good: the test would time out.
    [Test]
    public async Task Replies_to_sends_from_many_threads_reach_every_kind_of_reader_without_the_workers_tick()
    {
        Random random = Fuzz.Random(out _);
        int count = Fuzz.Iterations(4000);
        int threads = random.Next(1, 4);
        await using var services = await Services.StartAsync("lazy");
        ZlinkReceiver receiver = services.Receiver;
        await using var gateway = new ZlinkGateway(services.Context, services.Discovery, new GatewayOptions { TickMilliseconds = 1_000_000 });
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
        Task echo = Task.Run(async () =>
        {
            while (true)
            {
                using ServiceMessage m = await receiver.ReceiveAsync(failed.Token);
                Assert.That(receiver.Send(m.Peer, m[0]), Is.True);
            }
        });
        _ = echo.ContinueWith(_ => failed.Cancel(), CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);

        await gateway.SendAsync("lazy", BitConverter.GetBytes(-1), failed.Token);
        (await gateway.ReceiveAsync(failed.Token)).Dispose();

        // Senders on their own threads, each with pauses of its own, so that the reader below
        // sometimes waits and sometimes finds replies queued.
        int[] seeds = [.. Enumerable.Range(0, threads).Select(_ => random.Next())];
        Task[] senders = [.. Enumerable.Range(0, threads).Select(t => Task.Run(async () =>
        {
            var r = new Random(seeds[t]);
            for (int id = t; id < count; id += threads)
            {
                while (!gateway.TrySend("lazy", BitConverter.GetBytes(id)))
                {
                    await Task.Delay(1, failed.Token);
                }

                if (r.Next(8) == 0)
                {
                    await Task.Delay(r.Next(3), failed.Token); // past libzmq's 1 ms between command looks on send
                }
            }
        }, failed.Token))];

        var seen = new bool[count];
        for (int got = 0; got < count; got++)
        {
            ServiceMessage reply;
            switch (random.Next(16) == 0 ? 0 : random.Next(1, 4)) // ReceiveAsync drains the socket itself: rarely
            {
                case 0:
                    reply = await gateway.ReceiveAsync(failed.Token);
                    break;
                case 1:
                    reply = await gateway.Replies.ReadAsync(failed.Token);
                    break;
                case 2:
                    ServiceMessage? next;
                    while (!gateway.Replies.TryRead(out next))
                    {
                        Assert.That(await gateway.Replies.WaitToReadAsync(failed.Token), Is.True);
                    }

                    reply = next;
                    break;
                default:
                    ServiceMessage? polled;
                    while (!gateway.Replies.TryRead(out polled))
                    {
                        await Task.Yield(); // polling: TryRead alone must see what unchecked sends left
                        failed.Token.ThrowIfCancellationRequested();
                    }

                    reply = polled;
                    break;
            }

            using (reply)
            {
                int id = BitConverter.ToInt32(reply[0]);
                Assert.That(id, Is.InRange(0, count - 1), "a reply to a request of this test");
                Assert.That(seen[id], Is.False, $"reply {id} arrives once");
                seen[id] = true;
            }
        }

        await Task.WhenAll(senders);
        Assert.That(seen.All(x => x), Is.True, "every request answered");
        await Task.Delay(20, Wait.Token);
        Assert.That(gateway.Replies.TryRead(out _), Is.False, "nothing more than was sent");
        await failed.CancelAsync();
        Assert.CatchAsync<OperationCanceledException>(async () => await echo);
    }

    // DrainAsync: sends racing with it either count (and are waited for) or throw; the result's
    // counts are exact; the replies stream ends after what was received, with the reason when
    // answers were missing.
    [Test]
    public async Task Drain_waits_for_every_answer_or_names_what_is_missing_and_refuses_later_sends()
    {
        Random random = Fuzz.Random(out _);
        int rounds = Fuzz.Iterations(4);
        for (int round = 0; round < rounds; round++)
        {
            await using var services = await Services.StartAsync("drain");
            ZlinkReceiver receiver = services.Receiver;
            await using var gateway = new ZlinkGateway(services.Context, services.Discovery);
            int count = random.Next(20, 300);
            int silentEvery = random.Next(3) == 0 ? 0 : random.Next(2, 9); // 0: the receiver answers everything
            int echoSeed = random.Next();
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
            Task echo = Task.Run(async () =>
            {
                var r = new Random(echoSeed);
                while (!stop.IsCancellationRequested)
                {
                    using ServiceMessage m = await receiver.ReceiveAsync(stop.Token);
                    int id = BitConverter.ToInt32(m[0]);
                    if (silentEvery != 0 && id % silentEvery == 0)
                    {
                        continue; // never answered
                    }

                    if (r.Next(10) == 0)
                    {
                        await Task.Delay(r.Next(3), stop.Token);
                    }

                    Assert.That(receiver.Send(m.Peer, m[0]), Is.True);
                }
            });

            await gateway.SendAsync("drain", BitConverter.GetBytes(1), Wait.Token); // id 1: answered whatever silentEvery is
            (await gateway.ReceiveAsync(Wait.Token)).Dispose();
            for (int id = 2; id < count; id++)
            {
                while (!gateway.TrySend("drain", BitConverter.GetBytes(id)))
                {
                    await Task.Delay(1, Wait.Token);
                }
            }

            long sentBefore = count - 1;
            long silent = silentEvery == 0 ? 0 : Enumerable.Range(2, count - 2).Count(id => id % silentEvery == 0);
            var answers = new HashSet<int>();
            GatewayDrainResult result;
            long raced = 0;
            if (silent == 0)
            {
                // Drain at once, while a sender races it: what it got in is waited for too.
                using var racing = new ManualResetEventSlim();
                Task racer = Task.Run(() =>
                {
                    racing.Set();
                    for (int id = count; ; id++)
                    {
                        try
                        {
                            if (gateway.TrySend("drain", BitConverter.GetBytes(id)))
                            {
                                Interlocked.Increment(ref raced);
                            }

                            if (id - count > 500)
                            {
                                Thread.Sleep(1); // enough racing: keep trying until refused
                            }
                        }
                        catch (InvalidOperationException e)
                        {
                            Assert.That(e.Message, Does.Contain("draining"));
                            return;
                        }
                    }
                });
                racing.Wait(Wait.Token);
                result = await gateway.DrainAsync(Timeout.InfiniteTimeSpan);
                await racer;
                Assert.That(result.Drained, Is.True, result.Reason);
                Assert.That(result.Sent, Is.EqualTo(sentBefore + Interlocked.Read(ref raced)), "every send that returned true is counted, and no other");
                Assert.That(result.Answered, Is.EqualTo(result.Sent));
                Assert.That(result.Outstanding, Is.Zero);
                Assert.That(result.Reason, Is.Null);
            }
            else
            {
                // Every answer that will come has come (the test read them), then a short drain.
                for (long n = 0; n < sentBefore - 1 - silent; n++)
                {
                    using ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token);
                    answers.Add(BitConverter.ToInt32(reply[0]));
                }

                result = await gateway.DrainAsync(TimeSpan.FromMilliseconds(random.Next(0, 30)));
                Assert.That(result.Drained, Is.False);
                Assert.That(result.Sent, Is.EqualTo(sentBefore));
                Assert.That(result.Answered, Is.EqualTo(sentBefore - silent));
                Assert.That(result.Outstanding, Is.EqualTo(silent));
                Assert.That(result.Reason, Does.Contain($"{silent} of {sentBefore}"));
            }

            Assert.That(gateway.DrainAsync(TimeSpan.Zero), Is.SameAs(gateway.DrainAsync(Timeout.InfiniteTimeSpan)), "one drain");
            Assert.Throws<InvalidOperationException>(() => gateway.TrySend("drain", "late"u8));
            Assert.ThrowsAsync<InvalidOperationException>(async () => await gateway.SendAsync("drain", new byte[1], Wait.Token));

            // What was received stays readable, then the stream ends (with the reason when one was given).
            while (gateway.Replies.TryRead(out ServiceMessage? reply))
            {
                using (reply)
                {
                    Assert.That(answers.Add(BitConverter.ToInt32(reply[0])), Is.True, "each answer once");
                }
            }

            Assert.That(answers.Count, Is.EqualTo(result.Answered - 1), "every answer counted was readable (id 1 was read first)");
            var closed = Assert.CatchAsync<System.Threading.Channels.ChannelClosedException>(async () => await gateway.ReceiveAsync(Wait.Token));
            if (!result.Drained)
            {
                Assert.That(closed!.InnerException?.Message ?? closed.Message, Does.Contain(result.Reason), "the reason reaches the reader");
            }

            await stop.CancelAsync();
            Assert.CatchAsync<OperationCanceledException>(async () => await echo);
        }
    }

    [Test]
    public async Task Drain_refuses_a_negative_timeout_and_a_disposed_gateway()
    {
        await using var services = await Services.StartAsync("drainargs");
        var gateway = new ZlinkGateway(services.Context, services.Discovery);
        Assert.Throws<ArgumentOutOfRangeException>(() => gateway.DrainAsync(TimeSpan.FromMilliseconds(-2)));
        GatewayDrainResult idle = await gateway.DrainAsync(TimeSpan.Zero);
        Assert.That((idle.Drained, idle.Sent, idle.Answered), Is.EqualTo((true, 0L, 0L)), "nothing sent: drained at once");
        await gateway.DisposeAsync();
        var disposed = Assert.Throws<ObjectDisposedException>(() => gateway.DrainAsync(TimeSpan.Zero));
        Assert.That(disposed!.ObjectName, Is.EqualTo(typeof(ZlinkGateway).FullName), "named after the public type, not its worker");
    }

    private static int PartsOf(int i) => 1 + (i % 3);

    private static byte[] Body(int i, int part) => [.. BitConverter.GetBytes(i * 31 + part), .. new byte[(i * 7 + part) % 90]];

    private static async ValueTask<ServiceMessage> Next(Random random, Func<CancellationToken, ValueTask<ServiceMessage>> receive,
        System.Threading.Channels.ChannelReader<ServiceMessage> queue, CancellationToken token)
    {
        switch (random.Next(4))
        {
            case 0:
                await Task.Yield();
                return await receive(token);
            case 1:
                return await queue.ReadAsync(token);
            case 2:
                if (random.Next(8) == 0)
                {
                    await Task.Delay(1, token); // the worker drains meanwhile
                }

                return await receive(token);
            default:
                return await receive(token);
        }
    }

    /// <summary>A registry, a receiver registered for one service and a discovery that lists it.</summary>
    internal sealed class Services : IAsyncDisposable
    {
        private Services(ZlinkContext context, ZlinkRegistry registry, ZlinkReceiver receiver, ZlinkDiscovery discovery)
        {
            Context = context;
            Registry = registry;
            Receiver = receiver;
            Discovery = discovery;
        }

        public ZlinkContext Context { get; }

        public ZlinkRegistry Registry { get; }

        public ZlinkReceiver Receiver { get; }

        public ZlinkDiscovery Discovery { get; }

        public static async Task<Services> StartAsync(string service)
        {
            var context = new ZlinkContext();
            var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
            var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
            var discovery = new ZlinkDiscovery(context);
            var services = new Services(context, registry, receiver, discovery);
            receiver.Bind("tcp://127.0.0.1:*");
            await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
            await receiver.RegisterAsync(service, cancellationToken: Wait.Token);
            await discovery.ConnectRegistryAsync(registry.PubEndpoint);
            await discovery.WaitForAsync(service, r => r.Count == 1, Wait.Token);
            return services;
        }

        public async ValueTask DisposeAsync()
        {
            await Discovery.DisposeAsync();
            await Receiver.DisposeAsync();
            await Registry.DisposeAsync();
            Context.Dispose();
        }
    }
}
