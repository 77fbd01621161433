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
    private sealed class Services : IAsyncDisposable
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
