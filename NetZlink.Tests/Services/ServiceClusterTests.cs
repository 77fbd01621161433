// Randomized multi-node runs of the service layer in one process: registries joining and dying,
// receivers registering, unregistering, crashing and moving to another registry, with a gateway
// sending batches between the changes. Every batch is accounted exactly: each request answered
// once, by a receiver that should be listed, and round-robin and weighted shares exact over whole
// cycles. Short heartbeats (100 ms, expiry 600 ms, lists every 300 ms) keep it to seconds.
// Seeded: NETZLINK_FUZZ_SEED=<seed> replays a run, NETZLINK_FUZZ_ITERATIONS=<n> sets the steps.
using System.Buffers.Binary;
using System.Diagnostics;
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[NonParallelizable]
[CancelAfter(90_000)]
public sealed class ServiceClusterTests
{
    private const string Service = "cluster";

    private sealed class Node
    {
        public required ZlinkReceiver Receiver;
        public required Task Echo;
        public required Reg Home;
        public required uint Weight;
        public required string Endpoint;
        public int Number;
        public int Answered;
    }

    private sealed class Reg
    {
        public required ZlinkRegistry Registry;
        public bool Alive = true;
    }

    private static Task EchoAsync(ZlinkReceiver receiver, Node? _, Func<Node> self) => Task.Run(async () =>
    {
        try
        {
            await foreach (ServiceMessage m in receiver.Requests.ReadAllAsync())
            {
                using (m)
                {
                    Interlocked.Increment(ref self().Answered);
                    Assert.That(receiver.Send(m.Peer, m[0]), Is.True, "answer to a connected gateway");
                }
            }
        }
        catch (ObjectDisposedException)
        {
            // crashed: the receiver was disposed under the loop
        }
    });

    private static async Task<Node> StartNode(ZlinkContext context, Reg home, uint weight, int number)
    {
        var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(home.Registry.RouterEndpoint);
        await receiver.RegisterAsync(Service, weight: weight, cancellationToken: Wait.Token);
        Node? node = null;
        node = new Node
        {
            Receiver = receiver,
            Echo = EchoAsync(receiver, null, () => node!),
            Home = home,
            Weight = weight,
            Endpoint = receiver.BoundEndpoint!,
            Number = number,
        };
        return node;
    }

    private static async Task<Reg> StartRegistry(ZlinkContext context, List<Reg> registries, ZlinkDiscovery discovery)
    {
        var reg = new Reg { Registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry()) };
        foreach (Reg other in registries.Where(r => r.Alive))
        {
            await reg.Registry.AddPeerAsync(other.Registry.PubEndpoint);
            await other.Registry.AddPeerAsync(reg.Registry.PubEndpoint);
        }

        registries.Add(reg);
        await discovery.ConnectRegistryAsync(reg.Registry.PubEndpoint);
        return reg;
    }

    /// <summary>Waits until discovery and the gateway both hold exactly the expected receivers.</summary>
    private static async Task<TimeSpan> Converge(ZlinkDiscovery discovery, ZlinkGateway gateway, List<Node> expected, string why)
    {
        var clock = Stopwatch.StartNew();
        // Endpoints and weights: a batch's shares are exact only once the gateway has the weights too.
        string[] want = [.. expected.Select(n => $"{n.Endpoint} w{n.Weight}").Order(StringComparer.Ordinal)];
        while (true)
        {
            string[] seen = [.. discovery.GetReceivers(Service).Select(r => $"{r.Endpoint} w{r.Weight}").Order(StringComparer.Ordinal)];
            string[] targets = [.. gateway.Targets(Service).Select(t => $"{t.Endpoint} w{t.Weight}").Order(StringComparer.Ordinal)];
            if (seen.SequenceEqual(want) && targets.SequenceEqual(want))
            {
                return clock.Elapsed;
            }

            if (clock.Elapsed > TimeSpan.FromSeconds(15))
            {
                Assert.Fail($"after {why}: discovery lists [{string.Join(", ", seen)}], gateway sends to [{string.Join(", ", targets)}], expected [{string.Join(", ", want)}]");
            }

            await Task.Delay(10, Wait.Token);
        }
    }

    /// <summary>One batch: every receiver answers a warm-up sent to it by id, then whole cycles of
    /// the strategy; each request must come back once, and each receiver's share must be exact.</summary>
    private static async Task Batch(ZlinkGateway gateway, List<Node> nodes, LoadBalancing strategy, int cycles, int batch)
    {
        gateway.SetLoadBalancing(Service, strategy);
        var byRid = nodes.ToDictionary(n => n.Receiver.RoutingId);
        var deadline = Stopwatch.StartNew();
        foreach (Node n in nodes)
        {
            byte[] warm = new byte[8];
            BinaryPrimitives.WriteInt64LittleEndian(warm, -1 - n.Number);
            while (!gateway.TrySendTo(Service, n.Receiver.RoutingId.Span, warm))
            {
                Assert.That(deadline.Elapsed, Is.LessThan(TimeSpan.FromSeconds(10)), $"receiver {n.Number} never became reachable");
                await Task.Delay(5, Wait.Token);
            }
        }

        var warmed = new HashSet<int>();
        for (int i = 0; i < nodes.Count; i++)
        {
            using ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token);
            Assert.That(byRid.TryGetValue(reply.PeerId(), out Node? from), Is.True, "a warm-up answer from a receiver that is not listed");
            long id = BinaryPrimitives.ReadInt64LittleEndian(reply[0]);
            Assert.That(id, Is.EqualTo(-1 - from!.Number), "a warm-up answered by the receiver it was sent to");
            Assert.That(warmed.Add(from.Number), Is.True);
        }

        long cycle = strategy == LoadBalancing.Weighted ? nodes.Sum(n => (long)n.Weight) : nodes.Count;
        long count = cycle * cycles;
        byte[] body = new byte[8];
        for (long i = 0; i < count; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(body, (batch * 1_000_000L) + i);
            Assert.That(gateway.TrySend(Service, body), Is.True, $"send {i} of {count}");
        }

        var seen = new bool[count];
        var share = nodes.ToDictionary(n => n.Number, _ => 0L);
        using var patience = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
        patience.CancelAfter(TimeSpan.FromSeconds(20));
        for (long i = 0; i < count; i++)
        {
            using ServiceMessage reply = await gateway.ReceiveAsync(patience.Token);
            Assert.That(reply.Service, Is.EqualTo(Service));
            Assert.That(byRid.TryGetValue(reply.PeerId(), out Node? from), Is.True, "an answer from a receiver that is not listed");
            long id = BinaryPrimitives.ReadInt64LittleEndian(reply[0]) - (batch * 1_000_000L);
            Assert.That(id, Is.InRange(0, count - 1), "an answer to a request of this batch");
            Assert.That(seen[id], Is.False, $"request {id} answered twice");
            seen[id] = true;
            share[from!.Number]++;
        }

        Assert.That(gateway.Replies.TryPeek(out _), Is.False, "no answer beyond the requests sent");
        foreach (Node n in nodes)
        {
            long want = strategy == LoadBalancing.Weighted ? n.Weight * cycles : cycles;
            Assert.That(share[n.Number], Is.EqualTo(want), $"{strategy}: receiver {n.Number} (weight {n.Weight}) got {share[n.Number]} of {count}");
        }

        TestContext.Out.WriteLine($"  batch {batch}: {count} requests {strategy} over {nodes.Count} receivers [{string.Join(", ", nodes.Select(n => $"#{n.Number}w{n.Weight}:{share[n.Number]}"))}], each answered once");
    }

    [Test]
    public async Task Registries_and_receivers_come_and_go_and_every_batch_is_delivered_exactly()
    {
        Random random = Fuzz.Random(out _);
        int steps = Fuzz.Iterations(10);
        using var context = new ZlinkContext();
        // Registries publish every 300 ms: one silent for three of those no longer counts.
        await using var discovery = new ZlinkDiscovery(context, registryTimeout: TimeSpan.FromMilliseconds(900));
        var registries = new List<Reg>();
        var nodes = new List<Node>();
        int nextNumber = 0;
        await StartRegistry(context, registries, discovery);
        await StartRegistry(context, registries, discovery);
        await using var gateway = new ZlinkGateway(context, discovery);
        Reg AnyLive() => registries.Where(r => r.Alive).ElementAt(random.Next(registries.Count(r => r.Alive)));

        try
        {
            for (int k = 0; k < 2; k++)
            {
                nodes.Add(await StartNode(context, AnyLive(), (uint)random.Next(1, 5), nextNumber++));
            }

            await Converge(discovery, gateway, nodes, "start");
            await Batch(gateway, nodes, LoadBalancing.RoundRobin, 5, 0);
            for (int step = 1; step <= steps; step++)
            {
                int action = random.Next(6);
                string what;
                var clock = Stopwatch.StartNew();
                if (action == 0 && nodes.Count < 6 || nodes.Count < 2)
                {
                    Node n = await StartNode(context, AnyLive(), (uint)random.Next(1, 5), nextNumber++);
                    nodes.Add(n);
                    what = $"receiver #{n.Number} (weight {n.Weight}) registers";
                }
                else if (action == 1)
                {
                    Node n = nodes[random.Next(nodes.Count)];
                    await n.Receiver.UnregisterAsync(Service);
                    nodes.Remove(n);
                    await Converge(discovery, gateway, nodes, "unregister");
                    await n.Receiver.DisposeAsync();
                    what = $"receiver #{n.Number} unregisters";
                }
                else if (action == 2)
                {
                    Node n = nodes[random.Next(nodes.Count)];
                    await n.Receiver.DisposeAsync(); // a crash: no UNREGISTER, heartbeats stop
                    nodes.Remove(n);
                    TimeSpan gone = await Converge(discovery, gateway, nodes, "crash");
                    // Expiry, not a disconnect, removes it: not before the heartbeat timeout less one interval.
                    Assert.That(gone, Is.GreaterThan(TimeSpan.FromMilliseconds(400)), "removed by heartbeat expiry (600 ms)");
                    what = $"receiver #{n.Number} crashes (gone from discovery after {gone.TotalMilliseconds:F0} ms)";
                }
                else if (action == 3 && registries.Count(r => r.Alive) > 1)
                {
                    Reg dead = AnyLive();
                    dead.Alive = false;
                    await dead.Registry.DisposeAsync();
                    List<Node> orphans = [.. nodes.Where(n => n.Home == dead)];
                    nodes.RemoveAll(orphans.Contains);
                    TimeSpan gone = await Converge(discovery, gateway, nodes, "registry death");
                    foreach (Node n in orphans)
                    {
                        n.Home = AnyLive();
                        await n.Receiver.ConnectRegistryAsync(n.Home.Registry.RouterEndpoint);
                        await n.Receiver.RegisterAsync(Service, weight: n.Weight, cancellationToken: Wait.Token);
                        nodes.Add(n);
                    }

                    what = $"a registry dies ({orphans.Count} receivers gone after {gone.TotalMilliseconds:F0} ms, then registered again elsewhere)";
                }
                else if (action == 4 && registries.Count(r => r.Alive) < 4)
                {
                    Reg reg = await StartRegistry(context, registries, discovery);
                    Node n = await StartNode(context, reg, (uint)random.Next(1, 5), nextNumber++);
                    nodes.Add(n);
                    what = $"a registry joins, receiver #{n.Number} registers with it";
                }
                else
                {
                    Node n = nodes[random.Next(nodes.Count)];
                    n.Weight = (uint)random.Next(1, 7);
                    await n.Receiver.UpdateWeightAsync(Service, n.Weight, Wait.Token);
                    await discovery.WaitForAsync(Service, r => r.Any(x => x.Endpoint == n.Endpoint && x.Weight == n.Weight), Wait.Token);
                    what = $"receiver #{n.Number} changes its weight to {n.Weight}";
                }

                TimeSpan settled = await Converge(discovery, gateway, nodes, what);
                TestContext.Out.WriteLine($"step {step}: {what}; settled in {clock.Elapsed.TotalMilliseconds:F0} ms ({nodes.Count} receivers, {registries.Count(r => r.Alive)} registries)");
                await Batch(gateway, nodes, random.Next(2) == 0 ? LoadBalancing.RoundRobin : LoadBalancing.Weighted, random.Next(1, 6), step);
            }

            foreach (Reg r in registries.Where(r => r.Alive))
            {
                Assert.That(r.Registry.RefusedMessages, Is.Zero, r.Registry.LastRefusal);
            }

            Assert.That(discovery.RefusedMessages, Is.Zero, discovery.LastRefusal);
        }
        finally
        {
            foreach (Node n in nodes)
            {
                await n.Receiver.DisposeAsync();
            }

            foreach (Reg r in registries)
            {
                await r.Registry.DisposeAsync();
            }
        }
    }

    [Test]
    public async Task Sends_from_many_threads_at_once_are_each_delivered_once_and_allocate_nothing()
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        var reg = new Reg { Registry = registry };
        var nodes = new List<Node>();
        for (int i = 0; i < 3; i++)
        {
            nodes.Add(await StartNode(context, reg, 1, i));
        }

        await using var gateway = new ZlinkGateway(context, discovery);
        await Converge(discovery, gateway, nodes, "start");
        await Batch(gateway, nodes, LoadBalancing.RoundRobin, 10, 0);

        const int threads = 4, each = 2_500;
        var senders = Enumerable.Range(0, threads).Select(t => Task.Run(() =>
        {
            byte[] body = new byte[8];
            for (int i = 0; i < each; i++)
            {
                BinaryPrimitives.WriteInt64LittleEndian(body, ((long)t * each) + i);
                Assert.That(gateway.TrySend(Service, body), Is.True);
            }
        })).ToArray();
        var seen = new bool[threads * each];
        for (int i = 0; i < threads * each; i++)
        {
            using ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token);
            long id = BinaryPrimitives.ReadInt64LittleEndian(reply[0]);
            Assert.That(seen[id], Is.False, $"request {id} answered twice");
            seen[id] = true;
        }

        await Task.WhenAll(senders);
        Assert.That(nodes.Sum(n => n.Answered), Is.EqualTo((threads * each) + 30 + 3));

        // Allocation: sends and receives on this thread, after the pools are warm.
        byte[] payload = new byte[8];
        const int rounds = 2_000;
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < rounds; i++)
        {
            if (!gateway.TrySend(Service, payload))
            {
                Assert.Fail("send failed");
            }

            ServiceMessage? reply;
            while (!gateway.Replies.TryRead(out reply))
            {
                Thread.SpinWait(20);
            }

            reply.Dispose();
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        TestContext.Out.WriteLine($"{rounds} gateway send + receive round trips allocated {allocated} bytes on the calling thread");
        Assert.That(allocated, Is.LessThan(rounds), "less than one byte per round trip: nothing per message");
        foreach (Node n in nodes)
        {
            await n.Receiver.DisposeAsync();
        }
    }
}
