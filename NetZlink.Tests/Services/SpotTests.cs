// SPOT, zlink's topic publish/subscribe mesh, in one process: exact and pattern subscriptions,
// local and remote delivery, the mesh built through a registry and discovery, TLS, bad arguments,
// and a publish path that allocates nothing.
using System.Text;
using NetZlink.Services;
using NetZlink.Tests.Engine;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(60_000)]
public sealed class SpotTests
{
    internal static SpotNodeOptions FastNode() => new() { HeartbeatInterval = TimeSpan.FromMilliseconds(100) };

    /// <summary>Publishes <paramref name="topic"/> until <paramref name="subscriber"/> receives it
    /// (the peer's connection and subscription are then in place), and drains the probes.</summary>
    internal static async Task ProbeAsync(ZlinkSpotPublisher publisher, ZlinkSpotSubscriber subscriber, string topic)
    {
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (true)
        {
            publisher.Publish(topic, "probe"u8);
            using var poll = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
            poll.CancelAfter(50);
            try
            {
                using SpotMessage m = await subscriber.ReceiveAsync(poll.Token);
                Assert.That(m.Topic, Is.EqualTo(topic), "only the probe is subscribed while probing");
                break;
            }
            catch (OperationCanceledException) when (!Wait.Token.IsCancellationRequested)
            {
                Assert.That(DateTime.UtcNow, Is.LessThan(deadline), $"{topic} never arrived");
            }
        }

        // Probes sent before the first arrived may still come: they are all before anything else.
        await Task.Delay(100, Wait.Token);
        while (subscriber.Messages.TryRead(out SpotMessage extra))
        {
            using (extra)
            {
                Assert.That(extra.Topic, Is.EqualTo(topic));
            }
        }
    }

    private static async Task<List<(string Topic, string Body)>> TakeAsync(ZlinkSpotSubscriber subscriber, int count)
    {
        var got = new List<(string, string)>();
        for (int i = 0; i < count; i++)
        {
            using SpotMessage m = await subscriber.ReceiveAsync(Wait.Token);
            got.Add((m.Topic, Encoding.UTF8.GetString(m[0])));
        }

        return got;
    }

    [Test]
    public async Task Exact_and_pattern_subscriptions_take_what_they_match_once_locally_and_from_a_peer()
    {
        using var context = new ZlinkContext();
        await using var a = new ZlinkSpotNode(context, FastNode());
        await using var b = new ZlinkSpotNode(context, FastNode());
        a.Bind("tcp://127.0.0.1:*");
        b.Bind("tcp://127.0.0.1:*");
        await b.ConnectPeerAsync(a.BoundEndpoint!);
        Assert.That(b.Peers, Is.EquivalentTo(new[] { a.BoundEndpoint }));

        using ZlinkSpotPublisher pub = a.CreatePublisher();
        await using ZlinkSpotSubscriber local = a.CreateSubscriber();
        await using ZlinkSpotSubscriber remote = b.CreateSubscriber();
        remote.Subscribe("probe");
        await ProbeAsync(pub, remote, "probe");
        remote.Unsubscribe("probe");

        foreach (ZlinkSpotSubscriber s in new[] { local, remote })
        {
            s.Subscribe("chat:room1");
            s.SubscribePattern("chat:*"); // overlaps the exact one: still once
            s.Subscribe("a:1");          // not a:10, though its wire filter is a prefix of it
        }

        await ProbeAsync(pub, remote, "chat:room1"); // the new filters reached a (they follow the old in order)
        while (local.Messages.TryRead(out SpotMessage probe))
        {
            using (probe)
            {
                Assert.That(probe.Topic, Is.EqualTo("chat:room1"), "the probes, delivered locally too");
            }
        }

        string[] topics = ["chat:room1", "chat:room2", "a:1", "a:10", "b", "chat", "chat:"];
        foreach (string t in topics)
        {
            pub.Publish(t, Encoding.UTF8.GetBytes("body " + t));
        }

        pub.Publish("end", "x"u8);
        string[] expected = ["chat:room1", "chat:room2", "a:1", "chat:"];
        foreach (ZlinkSpotSubscriber s in new[] { local, remote })
        {
            List<(string Topic, string Body)> got = await TakeAsync(s, expected.Length);
            Assert.That(got.Select(g => g.Topic), Is.EqualTo(expected), "in order, each once, nothing unmatched");
            Assert.That(got.All(g => g.Body == "body " + g.Topic), Is.True);
        }

        // A message of several parts arrives whole; a message from a peer is not published again.
        pub.Publish("chat:multi", [new byte[] { 1 }, Array.Empty<byte>(), new byte[] { 3, 3 }]);
        foreach (ZlinkSpotSubscriber s in new[] { local, remote })
        {
            using SpotMessage m = await s.ReceiveAsync(Wait.Token);
            Assert.That(m.Topic, Is.EqualTo("chat:multi"));
            Assert.That(m.TopicUtf8.ToArray(), Is.EqualTo("chat:multi"u8.ToArray()));
            Assert.That(m.PartCount, Is.EqualTo(3));
            Assert.That(m[0].ToArray(), Is.EqualTo(new byte[] { 1 }));
            Assert.That(m[1].Length, Is.Zero);
            Assert.That(m[2].ToArray(), Is.EqualTo(new byte[] { 3, 3 }));
        }

        // Unsubscribed: nothing more from that pattern; the exact topic still arrives.
        remote.Unsubscribe("chat:*");
        remote.Subscribe("probe2");
        await ProbeAsync(pub, remote, "probe2");
        pub.Publish("chat:room2", "gone"u8);
        pub.Publish("chat:room1", "kept"u8);
        List<(string Topic, string Body)> after = await TakeAsync(remote, 1);
        Assert.That(after, Is.EqualTo(new[] { ("chat:room1", "kept") }));
        Assert.That(remote.Subscriptions, Is.EquivalentTo(new[] { "chat:room1", "a:1", "probe2" }));
        Assert.That(a.RefusedMessages + b.RefusedMessages, Is.Zero, a.LastRefusal ?? b.LastRefusal);
        Assert.That(local.Dropped + remote.Dropped, Is.Zero);
    }

    [Test]
    public async Task Nodes_find_each_other_through_a_registry_and_discovery_and_drop_a_node_that_leaves()
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        var nodes = new List<(ZlinkSpotNode Node, ZlinkDiscovery Discovery)>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                var node = new ZlinkSpotNode(context, FastNode());
                node.Bind("tcp://127.0.0.1:*");
                await node.ConnectRegistryAsync(registry.RouterEndpoint);
                await node.RegisterAsync(cancellationToken: Wait.Token);
                var discovery = new ZlinkDiscovery(context, ServiceType.Spot);
                await discovery.ConnectRegistryAsync(registry.PubEndpoint);
                await node.SetDiscoveryAsync(discovery);
                nodes.Add((node, discovery));
            }

            foreach ((ZlinkSpotNode node, _) in nodes)
            {
                string[] others = [.. nodes.Where(n => n.Node != node).Select(n => n.Node.BoundEndpoint!)];
                Wait.Until(() => node.Peers.Order().SequenceEqual(others.Order()), $"node {node.BoundEndpoint} connected to the 2 others, not itself");
            }

            // The registry lists each node with its routing id, as a SPOT service.
            IReadOnlyList<ReceiverInfo> listed = nodes[0].Discovery.GetReceivers(ZlinkSpotNode.DefaultServiceName);
            Assert.That(listed.Select(r => r.RoutingId), Is.EquivalentTo(nodes.Select(n => n.Node.RoutingId)));

            await using ZlinkSpotSubscriber sub = nodes[2].Node.CreateSubscriber();
            sub.Subscribe("t");
            using ZlinkSpotPublisher pub0 = nodes[0].Node.CreatePublisher();
            using ZlinkSpotPublisher pub1 = nodes[1].Node.CreatePublisher();
            await ProbeAsync(pub0, sub, "t");
            await ProbeAsync(pub1, sub, "t");

            // Node 1 unregisters: the others disconnect from it.
            await nodes[1].Node.UnregisterAsync();
            string gone = nodes[1].Node.BoundEndpoint!;
            Wait.Until(() => !nodes[0].Node.Peers.Contains(gone) && !nodes[2].Node.Peers.Contains(gone), "the others dropped the node that unregistered");
            Assert.That(nodes[2].Node.Peers, Is.EquivalentTo(new[] { nodes[0].Node.BoundEndpoint }));
        }
        finally
        {
            foreach ((ZlinkSpotNode node, ZlinkDiscovery discovery) in nodes)
            {
                await node.DisposeAsync();
                await discovery.DisposeAsync();
            }
        }
    }

    [Test]
    public async Task Bad_topics_patterns_and_names_are_refused_with_the_reason_and_change_nothing()
    {
        using var context = new ZlinkContext();
        await using var node = new ZlinkSpotNode(context);
        using ZlinkSpotPublisher pub = node.CreatePublisher();
        await using ZlinkSpotSubscriber sub = node.CreateSubscriber();

        Assert.That(() => pub.Publish("", "x"u8), Throws.ArgumentException.With.Message.Contains("not empty"));
        Assert.That(() => pub.Publish(new string('t', 256), "x"u8), Throws.ArgumentException.With.Message.Contains("at most 255"));
        Assert.That(() => pub.Publish(new string('é', 128), "x"u8), Throws.ArgumentException.With.Message.Contains("this one has 256"));
        Assert.That(() => pub.Publish("a\0b", "x"u8), Throws.ArgumentException.With.Message.Contains("NUL"));
        Assert.That(() => pub.Publish("a\ud800", "x"u8), Throws.ArgumentException.With.Message.Contains("unpaired surrogate"));
        Assert.That(() => pub.Publish("t", ReadOnlySpan<ReadOnlyMemory<byte>>.Empty), Throws.ArgumentException.With.Message.Contains("at least one part"));
        Assert.That(() => sub.SubscribePattern("a*b"), Throws.ArgumentException.With.Message.Contains("one '*', at its end"));
        Assert.That(() => sub.SubscribePattern("a**"), Throws.ArgumentException.With.Message.Contains("one '*', at its end"));
        Assert.That(() => sub.SubscribePattern("abc"), Throws.ArgumentException.With.Message.Contains("ends with its only '*'"));
        Assert.That(() => sub.Subscribe("a*"), Throws.Nothing, "a topic may hold a '*' (zlink takes it as a topic)");
        Assert.That(() => sub.Unsubscribe("never"), Throws.InvalidOperationException.With.Message.Contains("not subscribed"));
        Assert.That(() => node.RegisterAsync("Spot_Node"), Throws.ArgumentException.With.Message.Contains("a-z, 0-9"));
        Assert.That(() => node.RegisterAsync(new string('a', 65)), Throws.ArgumentException.With.Message.Contains("at most 64"));
        Assert.That(async () => await node.RegisterAsync(), Throws.InvalidOperationException.With.Message.Contains("Bind first"));
        node.Bind("tcp://127.0.0.1:*");
        Assert.That(async () => await node.RegisterAsync(), Throws.InvalidOperationException.With.Message.Contains("ConnectRegistryAsync"));
        Assert.That(async () => await node.UnregisterAsync(), Throws.InvalidOperationException.With.Message.Contains("not registered"));
        Assert.That(async () => await node.DisconnectPeerAsync("tcp://127.0.0.1:1"), Throws.InvalidOperationException.With.Message.Contains("not a peer"));
        await using var gatewayDiscovery = new ZlinkDiscovery(context);
        Assert.That(() => node.SetDiscoveryAsync(gatewayDiscovery), Throws.ArgumentException.With.Message.Contains("ServiceType.Spot"));
        Assert.That(() => new ZlinkSpotNode(context, new SpotNodeOptions { TlsCertificateFile = "/nonexistent/cert.pem" }),
            Throws.ArgumentException.With.Message.Contains("TlsKeyFile is missing"));
        Assert.That(sub.Subscriptions, Is.EquivalentTo(new[] { "a*" }), "only the one accepted");

        // Still works after all of that.
        sub.SubscribePattern("ok:*");
        pub.Publish("ok:1", "fine"u8);
        using SpotMessage m = await sub.ReceiveAsync(Wait.Token);
        Assert.That(m.Topic, Is.EqualTo("ok:1"));

        await node.DisposeAsync();
        Assert.That(() => pub.Publish("ok:1", "x"u8), Throws.InstanceOf<ObjectDisposedException>());
        Assert.That(() => node.CreateSubscriber(), Throws.InstanceOf<ObjectDisposedException>());
        Assert.That(async () => await sub.ReceiveAsync(Wait.Token), Throws.InstanceOf<System.Threading.Channels.ChannelClosedException>());
    }

    [Test]
    public async Task A_full_subscriber_drops_new_messages_and_counts_them()
    {
        using var context = new ZlinkContext();
        await using var node = new ZlinkSpotNode(context);
        using ZlinkSpotPublisher pub = node.CreatePublisher();
        await using ZlinkSpotSubscriber sub = node.CreateSubscriber(capacity: 3);
        sub.Subscribe("t");
        for (int i = 0; i < 5; i++)
        {
            pub.Publish("t", [(byte)i]);
        }

        Assert.That(sub.Dropped, Is.EqualTo(2));
        for (int i = 0; i < 3; i++)
        {
            using SpotMessage m = await sub.ReceiveAsync(Wait.Token);
            Assert.That(m[0][0], Is.EqualTo((byte)i), "the first three kept, in order");
        }
    }

    [Test]
    public async Task Publishing_allocates_nothing_per_message()
    {
        using var context = new ZlinkContext();
        await using var a = new ZlinkSpotNode(context);
        await using var b = new ZlinkSpotNode(context);
        a.Bind("tcp://127.0.0.1:*");
        await b.ConnectPeerAsync(a.BoundEndpoint!);
        await using ZlinkSpotSubscriber remote = b.CreateSubscriber();
        await using ZlinkSpotSubscriber local = a.CreateSubscriber();
        remote.Subscribe("alloc");
        local.Subscribe("alloc");
        using ZlinkSpotPublisher pub = a.CreatePublisher();
        await ProbeAsync(pub, remote, "alloc");
        while (local.Messages.TryRead(out SpotMessage m))
        {
            m.Dispose();
        }

        // Best of three rounds after a warm-up: the shared array pool may trim itself between
        // rounds (its buffers are then allocated again), but a cost per message shows in every round.
        byte[] payload = new byte[64];
        long best = long.MaxValue;
        for (int round = 0; round < 4; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 500; i++)
            {
                pub.Publish("alloc", payload);
                local.Messages.TryRead(out SpotMessage m);
                m.Dispose();
            }

            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            TestContext.Out.WriteLine($"round {round}: 500 publishes (one local delivery each) allocated {allocated} bytes");
            if (round > 0)
            {
                best = Math.Min(best, allocated);
            }
        }

        Assert.That(best, Is.LessThan(500), "fewer bytes than publishes: nothing per message");
    }

    [Test]
    public async Task Spot_nodes_and_a_receiver_with_its_gateway_work_over_tls()
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }

        using TestCertificates certs = TestCertificates.Create();
        using TestCertificates other = TestCertificates.Create(caName: "CN=Another test CA");
        using var context = new ZlinkContext();

        // SPOT: the PUB serves TLS, the peer's SUB verifies it.
        await using var a = new ZlinkSpotNode(context, new SpotNodeOptions { TlsCertificateFile = certs.ServerCert, TlsKeyFile = certs.ServerKey });
        await using var b = new ZlinkSpotNode(context, new SpotNodeOptions { TlsCaFile = certs.Ca, TlsHostname = "localhost" });
        a.Bind("tls://127.0.0.1:*");
        await b.ConnectPeerAsync(a.BoundEndpoint!);
        await using ZlinkSpotSubscriber sub = b.CreateSubscriber();
        sub.Subscribe("secure");
        using ZlinkSpotPublisher pub = a.CreatePublisher();
        await ProbeAsync(pub, sub, "secure");

        // Gateway and receiver: the receiver's ROUTER serves TLS, the gateway verifies it.
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        await using var receiver = new ZlinkReceiver(context, new ReceiverOptions
        {
            HeartbeatInterval = TimeSpan.FromMilliseconds(100),
            TlsCertificateFile = certs.ServerCert,
            TlsKeyFile = certs.ServerKey,
        });
        receiver.Bind("tls://127.0.0.1:*");
        Assert.That(receiver.BoundEndpoint, Does.StartWith("tls://"));
        await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
        await receiver.RegisterAsync("secure-echo", cancellationToken: Wait.Token);
        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        await using var gateway = new ZlinkGateway(context, discovery, new GatewayOptions { TlsCaFile = certs.Ca, TlsHostname = "localhost" });
        await gateway.SendAsync("secure-echo", "over tls"u8.ToArray(), Wait.Token);
        using (ServiceMessage request = await receiver.ReceiveAsync(Wait.Token))
        {
            Assert.That(request[0].ToArray(), Is.EqualTo("over tls"u8.ToArray()));
            Assert.That(receiver.Send(request.Peer, "answered"u8), Is.True);
        }

        using (ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token))
        {
            Assert.That(reply[0].ToArray(), Is.EqualTo("answered"u8.ToArray()));
        }

        // A gateway that trusts another CA never completes its connection: nothing is sent to it.
        await using var doubting = new ZlinkGateway(context, discovery, new GatewayOptions { TlsCaFile = other.Ca, TlsHostname = "localhost" });
        await Task.Delay(500, Wait.Token);
        Assert.That(doubting.TrySend("secure-echo", "refused"u8), Is.False, "no receiver whose certificate it could verify");

        Assert.That(() => new ZlinkGateway(context, discovery, new GatewayOptions { TlsHostname = "localhost" }),
            Throws.ArgumentException.With.Message.Contains("without TlsCaFile or TlsTrustSystem"));
        Assert.That(() => new ZlinkReceiver(context, new ReceiverOptions { TlsCertificateFile = certs.ServerCert }),
            Throws.ArgumentException.With.Message.Contains("TlsKeyFile is missing"));
    }
}
