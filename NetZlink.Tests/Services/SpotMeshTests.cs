// A randomized SPOT mesh in one process: nodes that register with a registry and find each other
// through discovery join, crash or leave; subscribers come and go and change their exact and
// pattern subscriptions (over topics that are prefixes of each other). After each step every node
// publishes a batch, and every subscriber must receive exactly the messages whose topic matches its
// subscriptions: each once, in each publisher's order, nothing else.
//
// Settling: each subscriber also subscribes to a topic of its own for the round ("~s<id>:<round>",
// after every other change of the step). Before a batch, every
// node publishes that topic to every subscriber until it arrives; a subscription reaches a peer in
// the order it was made, so the probe arriving means every earlier change of that subscriber's node
// is in place at that publisher. After the batch, each node publishes an end marker on the same
// topic: the marker arriving means that node's whole batch has (one connection keeps its order).
// Seeded: NETZLINK_FUZZ_SEED=<seed> replays a run, NETZLINK_FUZZ_ITERATIONS=<n> sets the steps.
using System.Text;
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[NonParallelizable]
[CancelAfter(180_000)]
public sealed class SpotMeshTests
{
    private static readonly string[] Topics = ["a", "a:1", "a:10", "a:2", "b:1", "b:x:1", "c"];
    private static readonly string[] Patterns = ["a*", "a:*", "a:1*", "b:*", "b:x*", "*"];

    private sealed class MeshNode
    {
        public required int Id;
        public required ZlinkSpotNode Node;
        public required ZlinkDiscovery Discovery;
        public required ZlinkSpotPublisher Publisher;
        public readonly List<MeshSub> Subs = [];
    }

    private sealed class MeshSub
    {
        public required int Id;
        public required ZlinkSpotSubscriber Sub;
        public readonly HashSet<string> Topics = [];
        public readonly HashSet<string> Patterns = [];

        /// <summary>The subscriber's own topic of this round, subscribed after every other change.</summary>
        public string SyncTopic = "";

        public bool Matches(string topic) =>
            Topics.Contains(topic) || Patterns.Any(p => topic.StartsWith(p[..^1], StringComparison.Ordinal));
    }

    [Test]
    public async Task Every_publish_reaches_exactly_the_matching_subscribers_while_nodes_and_subscriptions_change()
    {
        Random random = Fuzz.Random(out _);
        int steps = Fuzz.Iterations(6);
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        var nodes = new List<MeshNode>();
        int nextNode = 0, nextSub = 0;
        long delivered = 0;

        async Task<MeshNode> AddNode()
        {
            var node = new ZlinkSpotNode(context, SpotTests.FastNode());
            node.Bind("tcp://127.0.0.1:*");
            await node.ConnectRegistryAsync(registry.RouterEndpoint);
            await node.RegisterAsync(cancellationToken: Wait.Token);
            var discovery = new ZlinkDiscovery(context, ServiceType.Spot);
            await discovery.ConnectRegistryAsync(registry.PubEndpoint);
            await node.SetDiscoveryAsync(discovery);
            var m = new MeshNode { Id = nextNode++, Node = node, Discovery = discovery, Publisher = node.CreatePublisher() };
            nodes.Add(m);
            TestContext.Out.WriteLine($"  node {m.Id} joins at {node.BoundEndpoint}");
            return m;
        }

        void AddSub(MeshNode node)
        {
            var s = new MeshSub { Id = nextSub++, Sub = node.Node.CreateSubscriber() };
            node.Subs.Add(s);
            TestContext.Out.WriteLine($"  subscriber {s.Id} on node {node.Id}");
            for (int i = random.Next(1, 4); i > 0; i--)
            {
                Change(node, s);
            }
        }

        void Change(MeshNode node, MeshSub s)
        {
            bool pattern = random.Next(3) == 0;
            string value = pattern ? Patterns[random.Next(Patterns.Length)] : Topics[random.Next(Topics.Length)];
            HashSet<string> set = pattern ? s.Patterns : s.Topics;
            if (set.Contains(value))
            {
                s.Sub.Unsubscribe(value);
                set.Remove(value);
                TestContext.Out.WriteLine($"  subscriber {s.Id} (node {node.Id}) unsubscribes {value}");
            }
            else
            {
                if (pattern)
                {
                    s.Sub.SubscribePattern(value);
                }
                else
                {
                    s.Sub.Subscribe(value);
                }

                set.Add(value);
                TestContext.Out.WriteLine($"  subscriber {s.Id} (node {node.Id}) subscribes {value}");
            }
        }

        try
        {
            for (int i = 0; i < 3; i++)
            {
                AddSub(await AddNode());
            }

            for (int step = 0; step < steps; step++)
            {
                TestContext.Out.WriteLine($"step {step}:");
                int op = random.Next(5);
                if (op == 0 && nodes.Count < 5)
                {
                    MeshNode n = await AddNode();
                    AddSub(n);
                }
                else if (op == 1 && nodes.Count > 2)
                {
                    MeshNode gone = nodes[random.Next(nodes.Count)];
                    nodes.Remove(gone);
                    bool orderly = random.Next(2) == 0;
                    TestContext.Out.WriteLine($"  node {gone.Id} {(orderly ? "unregisters and leaves" : "crashes")}");
                    if (orderly)
                    {
                        await gone.Node.UnregisterAsync();
                    }

                    await gone.Node.DisposeAsync();
                    await gone.Discovery.DisposeAsync();
                }
                else if (op == 2)
                {
                    AddSub(nodes[random.Next(nodes.Count)]);
                }
                else if (op == 3 && nodes.Sum(n => n.Subs.Count) > 1)
                {
                    List<MeshNode> withSubs = [.. nodes.Where(x => x.Subs.Count > 0)];
                    MeshNode n = withSubs[random.Next(withSubs.Count)];
                    MeshSub s = n.Subs[random.Next(n.Subs.Count)];
                    n.Subs.Remove(s);
                    await s.Sub.DisposeAsync();
                    TestContext.Out.WriteLine($"  subscriber {s.Id} (node {n.Id}) is disposed");
                }
                else
                {
                    for (int k = random.Next(1, 5); k > 0; k--)
                    {
                        MeshNode n = nodes[random.Next(nodes.Count)];
                        if (n.Subs.Count > 0)
                        {
                            Change(n, n.Subs[random.Next(n.Subs.Count)]);
                        }
                    }
                }

                delivered += await BatchAsync(nodes, step, random);
            }

            TestContext.Out.WriteLine($"{steps} steps, {delivered} deliveries checked");
            foreach (MeshNode n in nodes)
            {
                Assert.That(n.Node.RefusedMessages, Is.Zero, n.Node.LastRefusal);
                Assert.That(n.Subs.Sum(s => s.Sub.Dropped), Is.Zero);
            }
        }
        finally
        {
            foreach (MeshNode n in nodes)
            {
                await n.Node.DisposeAsync();
                await n.Discovery.DisposeAsync();
            }
        }
    }

    /// <summary>Settles, publishes a batch from every node and checks every subscriber's deliveries exactly.</summary>
    private static async Task<long> BatchAsync(List<MeshNode> nodes, int round, Random random)
    {
        List<(MeshNode Node, MeshSub Sub)> subs = [.. nodes.SelectMany(n => n.Subs.Select(s => (n, s)))];
        foreach ((MeshNode _, MeshSub s) in subs)
        {
            // A new topic for this round, subscribed last: its probe arriving proves the changes before it.
            string old = s.SyncTopic;
            s.SyncTopic = $"~s{s.Id}:{round}";
            s.Sub.Subscribe(s.SyncTopic);
            if (old.Length > 0)
            {
                s.Sub.Unsubscribe(old);
            }
        }

        foreach (MeshNode p in nodes)
        {
            foreach ((MeshNode _, MeshSub s) in subs)
            {
                await SyncAsync(p, s, $"sync:{round}:{p.Id}");
            }
        }

        var expected = subs.ToDictionary(x => x.Sub, _ => new List<string>());
        foreach (MeshNode p in nodes)
        {
            for (int i = random.Next(5, 21); i > 0; i--)
            {
                string topic = Topics[random.Next(Topics.Length)];
                string body = $"m:{round}:{p.Id}:{i}";
                p.Publisher.Publish(topic, Encoding.UTF8.GetBytes(body));
                foreach ((MeshNode _, MeshSub s) in subs)
                {
                    if (s.Matches(topic))
                    {
                        expected[s].Add(topic + "|" + body);
                    }
                }
            }

            foreach ((MeshNode _, MeshSub s) in subs)
            {
                p.Publisher.Publish(s.SyncTopic, Encoding.UTF8.GetBytes($"end:{round}:{p.Id}"));
            }
        }

        long checkedCount = 0;
        foreach ((MeshNode n, MeshSub s) in subs)
        {
            var ends = new HashSet<int>();
            var got = new List<string>();
            while (ends.Count < nodes.Count)
            {
                using SpotMessage m = await s.Sub.ReceiveAsync(Wait.Token);
                string body = Encoding.UTF8.GetString(m[0]);
                if (m.Topic == s.SyncTopic && body.StartsWith($"end:{round}:", StringComparison.Ordinal))
                {
                    Assert.That(ends.Add(int.Parse(body.Split(':')[2], System.Globalization.CultureInfo.InvariantCulture)), Is.True, $"one end marker per publisher ({body})");
                }
                else if (!m.Topic.StartsWith('~'))
                {
                    got.Add(m.Topic + "|" + body);
                }
            }

            // Each publisher's messages in its order; publishers interleave freely.
            foreach (MeshNode p in nodes)
            {
                string mark = $"|m:{round}:{p.Id}:";
                Assert.That(got.Where(g => g.Contains(mark, StringComparison.Ordinal)),
                    Is.EqualTo(expected[s].Where(e => e.Contains(mark, StringComparison.Ordinal))),
                    $"round {round}: subscriber {s.Id} on node {n.Id} ({string.Join(' ', s.Topics.Concat(s.Patterns))}) from node {p.Id}");
            }

            Assert.That(got, Has.Count.EqualTo(expected[s].Count), $"round {round}: subscriber {s.Id}: nothing else");
            checkedCount += got.Count;
        }

        return checkedCount;
    }

    /// <summary>Publishes <paramref name="body"/> on the subscriber's own topic from node
    /// <paramref name="p"/> until it arrives; every other message then is a probe or marker.</summary>
    private static async Task SyncAsync(MeshNode p, MeshSub s, string body)
    {
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        byte[] bytes = Encoding.UTF8.GetBytes(body);
        while (true)
        {
            p.Publisher.Publish(s.SyncTopic, bytes);
            using var poll = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
            poll.CancelAfter(30);
            try
            {
                while (true)
                {
                    using SpotMessage m = await s.Sub.ReceiveAsync(poll.Token);
                    Assert.That(m.Topic, Does.StartWith("~"), $"only probes and markers while settling (subscriber {s.Id} got {m.Topic})");
                    if (m.Topic == s.SyncTopic && m[0].SequenceEqual(bytes))
                    {
                        return;
                    }
                }
            }
            catch (OperationCanceledException) when (!Wait.Token.IsCancellationRequested)
            {
                Assert.That(DateTime.UtcNow, Is.LessThan(deadline), $"subscriber {s.Id} never heard node {p.Id} ({p.Node.BoundEndpoint})");
            }
        }
    }
}
