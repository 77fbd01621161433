// A registry that restarts gets its receivers and SPOT nodes back (they register again when the
// registry connection is made again, and say so), a cancelled RegisterAsync is never listed, and a
// discovery says when it last heard from each registry.
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(120_000)]
public sealed class RegistryRestartTests
{
    private const string Service = "echo";
    private static readonly TimeSpan RegistryTimeout = TimeSpan.FromMilliseconds(900); // three of the test registries' broadcasts

    /// <summary>Two free endpoints for a registry: taken by a registry that is disposed at once.</summary>
    private static async Task<RegistryOptions> ReservedEndpoints()
    {
        using var context = new ZlinkContext();
        await using var probe = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        RegistryOptions options = ServiceRoundTripTests.FastRegistry();
        options.PubEndpoint = probe.PubEndpoint;
        options.RouterEndpoint = probe.RouterEndpoint;
        return options;
    }

    /// <summary>A registry on the reserved endpoints. The library closes a disposed registry's
    /// listening sockets in the background, so a bind refused as in use is tried again (as a
    /// restarted process would), for up to 10 s.</summary>
    private static ZlinkRegistry Start(ZlinkContext context, RegistryOptions at)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (true)
        {
            try
            {
                return new ZlinkRegistry(context, new RegistryOptions
                {
                    PubEndpoint = at.PubEndpoint,
                    RouterEndpoint = at.RouterEndpoint,
                    HeartbeatInterval = at.HeartbeatInterval,
                    HeartbeatTimeout = at.HeartbeatTimeout,
                    BroadcastInterval = at.BroadcastInterval,
                });
            }
            catch (EndpointException e) when (e.Message.Contains("EADDRINUSE", StringComparison.Ordinal) && DateTime.UtcNow < deadline)
            {
                Thread.Sleep(20);
            }
        }
    }

    private static SpotNodeOptions FastNode() => new() { HeartbeatInterval = TimeSpan.FromMilliseconds(100) };

    private static string[] Endpoints(IEnumerable<ReceiverInfo> receivers) => [.. receivers.Select(r => r.Endpoint).Order(StringComparer.Ordinal)];

    private static async Task Listed(ZlinkRegistry registry, ZlinkDiscovery discovery, ZlinkDiscovery spotDiscovery, string[] receivers, string[] nodes, string why)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (true)
        {
            string[] inRegistry = Endpoints(await registry.GetReceiversAsync(ServiceType.Gateway));
            string[] nodesInRegistry = Endpoints(await registry.GetReceiversAsync(ServiceType.Spot));
            string[] seen = Endpoints(discovery.GetReceivers(Service));
            string[] nodesSeen = Endpoints(spotDiscovery.GetReceivers(ZlinkSpotNode.DefaultServiceName));
            if (inRegistry.SequenceEqual(receivers) && seen.SequenceEqual(receivers) && nodesInRegistry.SequenceEqual(nodes) && nodesSeen.SequenceEqual(nodes))
            {
                return;
            }

            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"after {why}: the registry lists [{string.Join(", ", inRegistry)}] and nodes [{string.Join(", ", nodesInRegistry)}], " +
                    $"discovery [{string.Join(", ", seen)}] and nodes [{string.Join(", ", nodesSeen)}]; expected [{string.Join(", ", receivers)}] and nodes [{string.Join(", ", nodes)}]");
            }

            await Task.Delay(10, Wait.Token);
        }
    }

    /// <summary>The gateway reaches each receiver by its id and the answer comes back.</summary>
    private static async Task Reach(ZlinkGateway gateway, IEnumerable<ZlinkReceiver> receivers)
    {
        foreach (ZlinkReceiver receiver in receivers)
        {
            byte[] id = receiver.RoutingId.ToArray();
            byte[] payload = [.. id, 0x42];
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
            while (!gateway.TrySendTo(Service, id, payload))
            {
                Assert.That(DateTime.UtcNow, Is.LessThan(deadline), $"the gateway never reached {receiver.BoundEndpoint}");
                await Task.Delay(10, Wait.Token);
            }

            using (ServiceMessage request = await receiver.ReceiveAsync(Wait.Token))
            {
                Assert.That(request[0].ToArray(), Is.EqualTo(payload));
                Assert.That(receiver.Send(request.Peer, request[0]), Is.True);
            }

            using ServiceMessage answer = await gateway.ReceiveAsync(Wait.Token);
            Assert.That(answer[0].ToArray(), Is.EqualTo(payload), "the answer of the receiver asked");
        }
    }

    private static async Task<RegistrationChange> NextChange(System.Threading.Channels.ChannelReader<RegistrationChange> changes, string who)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
        timeout.CancelAfter(TimeSpan.FromSeconds(15));
        try
        {
            return await changes.ReadAsync(timeout.Token);
        }
        catch (OperationCanceledException) when (!Wait.Token.IsCancellationRequested)
        {
            Assert.Fail($"no registration change of {who} came");
            throw;
        }
    }

    [Test]
    public async Task Receivers_and_spot_nodes_are_listed_again_after_their_registry_restarts_and_say_so()
    {
        RegistryOptions at = await ReservedEndpoints();
        using var context = new ZlinkContext();
        ZlinkRegistry registry = Start(context, at);
        await using var discovery = new ZlinkDiscovery(context, ServiceType.Gateway, RegistryTimeout);
        await using var spotDiscovery = new ZlinkDiscovery(context, ServiceType.Spot, RegistryTimeout);
        await discovery.ConnectRegistryAsync(at.PubEndpoint);
        await spotDiscovery.ConnectRegistryAsync(at.PubEndpoint);
        await using var gateway = new ZlinkGateway(context, discovery);

        var receivers = new List<ZlinkReceiver>();
        var nodes = new List<ZlinkSpotNode>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                var r = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
                receivers.Add(r);
                r.Bind("tcp://127.0.0.1:*");
                Assert.That(r.GetRegistrationState(Service), Is.EqualTo(RegistrationState.NotRegistered));
                _ = r.RegistrationChanges; // kept from here on
                await r.ConnectRegistryAsync(at.RouterEndpoint);
                await r.RegisterAsync(Service, cancellationToken: Wait.Token);
                Assert.That(r.GetRegistrationState(Service), Is.EqualTo(RegistrationState.Registered));
                RegistrationChange first = await NextChange(r.RegistrationChanges, "a receiver");
                Assert.That((first.Service, first.Endpoint, first.Kind), Is.EqualTo((Service, r.BoundEndpoint!, RegistrationChangeKind.Registered)));
            }

            for (int i = 0; i < 2; i++)
            {
                var n = new ZlinkSpotNode(context, FastNode());
                nodes.Add(n);
                n.Bind("tcp://127.0.0.1:*");
                _ = n.RegistrationChanges;
                await n.ConnectRegistryAsync(at.RouterEndpoint);
                await n.RegisterAsync(cancellationToken: Wait.Token);
                Assert.That((await NextChange(n.RegistrationChanges, "a node")).Kind, Is.EqualTo(RegistrationChangeKind.Registered));
            }

            string[] receiverEndpoints = [.. receivers.Select(r => r.BoundEndpoint!).Order(StringComparer.Ordinal)];
            string[] nodeEndpoints = [.. nodes.Select(n => n.BoundEndpoint!).Order(StringComparer.Ordinal)];
            await Listed(registry, discovery, spotDiscovery, receiverEndpoints, nodeEndpoints, "registering");
            await Reach(gateway, receivers);
            uint firstId = registry.RegistryId;
            Assert.That(discovery.Registries.Single().RegistryId, Is.EqualTo(firstId));

            for (int restart = 1; restart <= 2; restart++)
            {
                await registry.DisposeAsync();
                foreach (ZlinkReceiver r in receivers)
                {
                    RegistrationChange lost = await NextChange(r.RegistrationChanges, "a receiver whose registry died");
                    Assert.That(lost.Kind, Is.EqualTo(RegistrationChangeKind.Lost));
                    Assert.That(lost.Reason, Does.Contain("registry connection dropped"));
                    Assert.That(r.GetRegistrationState(Service), Is.EqualTo(RegistrationState.Reconnecting));
                }

                foreach (ZlinkSpotNode n in nodes)
                {
                    Assert.That((await NextChange(n.RegistrationChanges, "a node whose registry died")).Kind, Is.EqualTo(RegistrationChangeKind.Lost));
                    Assert.That(n.GetRegistrationState(), Is.EqualTo(RegistrationState.Reconnecting));
                }

                registry = Start(context, at);
                Assert.That(await registry.GetReceiversAsync(), Is.Empty, "a new registry starts empty");
                foreach (ZlinkReceiver r in receivers)
                {
                    RegistrationChange again = await NextChange(r.RegistrationChanges, "a receiver whose registry came back");
                    Assert.That((again.Service, again.Endpoint, again.Kind), Is.EqualTo((Service, r.BoundEndpoint!, RegistrationChangeKind.Reregistered)));
                    Assert.That(again.Reason, Does.Contain("registry connection dropped"));
                    Assert.That(r.GetRegistrationState(Service), Is.EqualTo(RegistrationState.Registered));
                }

                foreach (ZlinkSpotNode n in nodes)
                {
                    Assert.That((await NextChange(n.RegistrationChanges, "a node whose registry came back")).Kind, Is.EqualTo(RegistrationChangeKind.Reregistered));
                }

                await Listed(registry, discovery, spotDiscovery, receiverEndpoints, nodeEndpoints, $"restart {restart}");

                // The list it holds may still be the old registry's (the same entries): the new
                // registry's id comes with its first broadcast, which can come after that.
                uint newId = registry.RegistryId;
                Wait.Until(() => discovery.Registries.Single().RegistryId == newId, "the discovery hears the new registry");
                await Reach(gateway, receivers);
            }

            Assert.That(receivers.Sum(r => r.RefusedMessages) + nodes.Sum(n => n.RefusedMessages), Is.Zero);
        }
        finally
        {
            foreach (ZlinkReceiver r in receivers)
            {
                await r.DisposeAsync();
            }

            foreach (ZlinkSpotNode n in nodes)
            {
                await n.DisposeAsync();
            }

            await registry.DisposeAsync();
        }
    }

    [Test]
    public async Task A_RegisterAsync_cancelled_before_any_registry_is_up_is_never_listed()
    {
        RegistryOptions at = await ReservedEndpoints();
        using var context = new ZlinkContext();
        await using var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(at.RouterEndpoint);
        await using var node = new ZlinkSpotNode(context, FastNode());
        node.Bind("tcp://127.0.0.1:*");
        await node.ConnectRegistryAsync(at.RouterEndpoint);

        using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(300)))
        {
            Assert.CatchAsync<OperationCanceledException>(() => receiver.RegisterAsync("cancelled", cancellationToken: cancel.Token));
        }

        using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(300)))
        {
            Assert.CatchAsync<OperationCanceledException>(() => node.RegisterAsync("cancelled", cancellationToken: cancel.Token));
        }

        Assert.That(receiver.GetRegistrationState("cancelled"), Is.EqualTo(RegistrationState.NotRegistered));
        Assert.That(node.GetRegistrationState("cancelled"), Is.EqualTo(RegistrationState.NotRegistered));
        Task control = receiver.RegisterAsync("control", cancellationToken: Wait.Token);
        Task nodeControl = node.RegisterAsync("control", cancellationToken: Wait.Token);

        await using ZlinkRegistry registry = Start(context, at);
        await control;
        await nodeControl;
        // Both connections are up and their REGISTERs went in order: a REGISTER of "cancelled" would be in.
        await Task.Delay(at.BroadcastInterval * 2, Wait.Token);
        IReadOnlyList<ReceiverInfo> listed = [.. await registry.GetReceiversAsync(ServiceType.Gateway), .. await registry.GetReceiversAsync(ServiceType.Spot)];
        Assert.That(listed.Select(r => r.Service).Order(StringComparer.Ordinal), Is.EqualTo(new[] { "control", "control" }));
        Assert.That(receiver.GetRegistrationState("control"), Is.EqualTo(RegistrationState.Registered));
    }

    [Test]
    public async Task A_RegisterAsync_cancelled_after_its_REGISTER_went_out_is_withdrawn_with_UNREGISTER()
    {
        using var context = new ZlinkContext();
        using var fake = context.CreateSocket(ZlinkSocketType.Router);
        fake.Bind("tcp://127.0.0.1:*");
        fake.ReceiveTimeout = 10_000;
        await using var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(fake.LastEndpoint!);
        using var cancel = new CancellationTokenSource();
        Task register = receiver.RegisterAsync("svc", cancellationToken: cancel.Token);

        List<byte[]> request = fake.ReceiveMultipart();
        RegistryRequest sent = ServiceProtocol.DecodeRegistryRequest(request.GetRange(1, request.Count - 1));
        Assert.That(sent.MessageId, Is.EqualTo(ServiceProtocol.Register));
        await cancel.CancelAsync();
        Assert.CatchAsync<OperationCanceledException>(() => register);

        // Heartbeats may have gone out before the cancel; the UNREGISTER follows them, and nothing after it.
        RegistryRequest next;
        int heartbeats = 0;
        do
        {
            Assert.That(heartbeats, Is.LessThan(50), "the cancelled registration is still heartbeated, and no UNREGISTER came");
            List<byte[]> m = fake.ReceiveMultipart();
            next = ServiceProtocol.DecodeRegistryRequest(m.GetRange(1, m.Count - 1));
            heartbeats++;
        }
        while (next.MessageId == ServiceProtocol.Heartbeat);

        Assert.That(next, Is.EqualTo(new RegistryRequest(ServiceProtocol.Unregister, ServiceType.Gateway, "svc", sent.Endpoint, 1)));
        // The late answer to the withdrawn REGISTER is taken, not counted as a stray.
        fake.SendMultipart([request[0], .. ServiceProtocol.EncodeRegisterAck(0, sent.Endpoint, "")]);
        var more = new List<byte[]>();
        Assert.That(fake.TryReceiveMultipart(more, TimeSpan.FromMilliseconds(500)), Is.False, "nothing after the UNREGISTER (no heartbeat, no REGISTER)");
        Assert.That(receiver.GetRegistrationState("svc"), Is.EqualTo(RegistrationState.NotRegistered));
        Assert.That(receiver.RefusedMessages, Is.Zero);
    }

    [Test]
    public async Task A_discovery_says_when_it_last_heard_from_each_registry()
    {
        using var context = new ZlinkContext();
        await using var a = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry(11));
        RegistryOptions silentAt = await ReservedEndpoints();
        await using var discovery = new ZlinkDiscovery(context, ServiceType.Gateway, RegistryTimeout);
        Assert.That(discovery.Registries, Is.Empty);
        DateTimeOffset before = DateTimeOffset.UtcNow;
        await discovery.ConnectRegistryAsync(a.PubEndpoint);
        await discovery.ConnectRegistryAsync(silentAt.PubEndpoint);
        await discovery.ConnectRegistryAsync(a.PubEndpoint); // once only

        Wait.Until(() => discovery.Registries[0].LastHeard is not null, "a SERVICE_LIST from registry 11");
        IReadOnlyList<RegistryContact> contacts = discovery.Registries;
        Assert.That(contacts.Select(c => c.Endpoint), Is.EqualTo(new[] { a.PubEndpoint, silentAt.PubEndpoint }));
        Assert.That(contacts[0].RegistryId, Is.EqualTo(11u));
        Assert.That(contacts[0].LastHeard, Is.GreaterThanOrEqualTo(before));
        Assert.That(contacts[1], Is.EqualTo(new RegistryContact(silentAt.PubEndpoint, null, null, null)), "never heard");

        // Heard again at every broadcast: the time and the sequence move on.
        RegistryContact first = contacts[0];
        Wait.Until(() => discovery.Registries[0].LastHeard > first.LastHeard, "a later SERVICE_LIST");
        Assert.That(discovery.Registries[0].ListSequence, Is.GreaterThanOrEqualTo(first.ListSequence!.Value));
    }

    [Test]
    public async Task A_discovery_reads_last_heard_times_from_the_clock_it_is_given()
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry(12));
        var clock = new FixedClock(new DateTimeOffset(2030, 1, 2, 3, 4, 5, TimeSpan.Zero));
        await using var discovery = new ZlinkDiscovery(context, ServiceType.Gateway, RegistryTimeout, clock);
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        Wait.Until(() => discovery.Registries[0].LastHeard is not null, "a SERVICE_LIST");
        Assert.That(discovery.Registries[0].LastHeard, Is.EqualTo(clock.Now));
    }

    private sealed class FixedClock(DateTimeOffset now) : TimeProvider
    {
        public DateTimeOffset Now { get; } = now;

        public override DateTimeOffset GetUtcNow() => Now;
    }

    private sealed class Member
    {
        public required string Name;
        public ZlinkReceiver? Receiver;
        public ZlinkSpotNode? Node;
        public Task? Registering;
        public bool Cancellable;
        public bool Crashed;

        public string Endpoint => Receiver?.BoundEndpoint ?? Node!.BoundEndpoint!;

        public ValueTask DisposeAsync() => Receiver is not null ? Receiver.DisposeAsync() : Node!.DisposeAsync();
    }

    [Test]
    public async Task Registry_restarts_at_random_points_and_exactly_the_live_registrations_are_listed_again()
    {
        Random random = Fuzz.Random(out _);
        int steps = Fuzz.Iterations(12);
        RegistryOptions at = await ReservedEndpoints();
        using var context = new ZlinkContext();
        ZlinkRegistry? registry = Start(context, at);
        await using var discovery = new ZlinkDiscovery(context, ServiceType.Gateway, RegistryTimeout);
        await using var spotDiscovery = new ZlinkDiscovery(context, ServiceType.Spot, RegistryTimeout);
        await discovery.ConnectRegistryAsync(at.PubEndpoint);
        await spotDiscovery.ConnectRegistryAsync(at.PubEndpoint);
        await using var gateway = new ZlinkGateway(context, discovery);
        var live = new List<Member>();    // registered or registering
        var gone = new List<Member>();    // unregistered, cancelled or crashed: must not be listed
        var log = new List<string>();
        int count = 0;
        try
        {
            for (int step = 0; step < steps; step++)
            {
                int action = random.Next(10);
                if (action < 4 || live.Count == 0)
                {
                    // Join: a receiver or a node; sometimes with a token cancelled at a random moment.
                    var m = new Member { Name = $"m{count++}", Cancellable = random.Next(3) == 0 };
                    if (random.Next(3) == 0)
                    {
                        m.Node = new ZlinkSpotNode(context, FastNode());
                        m.Node.Bind("tcp://127.0.0.1:*");
                        await m.Node.ConnectRegistryAsync(at.RouterEndpoint);
                    }
                    else
                    {
                        m.Receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
                        m.Receiver.Bind("tcp://127.0.0.1:*");
                        await m.Receiver.ConnectRegistryAsync(at.RouterEndpoint);
                    }

                    var cancel = new CancellationTokenSource();
                    if (m.Cancellable)
                    {
                        cancel.CancelAfter(random.Next(0, 60));
                    }

                    m.Registering = m.Receiver is not null
                        ? m.Receiver.RegisterAsync(Service, cancellationToken: cancel.Token)
                        : m.Node!.RegisterAsync(cancellationToken: cancel.Token);
                    live.Add(m);
                    log.Add($"{step}: {m.Name} ({(m.Node is null ? "receiver" : "node")}) registers{(m.Cancellable ? ", cancellable" : "")} with the registry {(registry is null ? "down" : "up")}");
                }
                else if (action < 6)
                {
                    // Leave: unregister (once registered) or crash (disposed without a word: expired).
                    Member m = live[random.Next(live.Count)];
                    if (!m.Registering!.IsCompleted && !m.Cancellable && registry is null)
                    {
                        registry = Start(context, at); // its registration waits for one
                        log.Add($"{step}: the registry comes back");
                    }

                    if (!await Settled(m))
                    {
                        live.Remove(m);
                        gone.Add(m);
                        log.Add($"{step}: {m.Name}'s cancelled registration is gone");
                        continue;
                    }

                    live.Remove(m);
                    gone.Add(m);
                    if (random.Next(2) == 0)
                    {
                        await (m.Receiver is not null ? m.Receiver.UnregisterAsync(Service) : m.Node!.UnregisterAsync());
                        log.Add($"{step}: {m.Name} unregisters with the registry {(registry is null ? "down" : "up")}");
                    }
                    else
                    {
                        m.Crashed = true;
                        await m.DisposeAsync();
                        log.Add($"{step}: {m.Name} crashes");
                    }
                }
                else if (registry is not null)
                {
                    // The registry dies; it comes back now, after a pause, or at a later step.
                    await registry.DisposeAsync();
                    registry = null;
                    int pause = random.Next(4);
                    log.Add($"{step}: the registry dies ({(pause == 3 ? "comes back later" : $"back after {pause * 150} ms")})");
                    if (pause < 3)
                    {
                        await Task.Delay(pause * 150, Wait.Token);
                        registry = Start(context, at);
                    }
                }
                else
                {
                    registry = Start(context, at);
                    log.Add($"{step}: the registry comes back");
                }

                await Task.Delay(random.Next(0, 200), Wait.Token);
            }

            registry ??= Start(context, at);
            foreach (Member m in live.ToList())
            {
                if (!await Settled(m))
                {
                    live.Remove(m);
                    gone.Add(m);
                }
            }

            string[] receivers = [.. live.Where(m => m.Receiver is not null).Select(m => m.Endpoint).Order(StringComparer.Ordinal)];
            string[] nodes = [.. live.Where(m => m.Node is not null).Select(m => m.Endpoint).Order(StringComparer.Ordinal)];
            TestContext.Out.WriteLine(string.Join("\n", log));
            TestContext.Out.WriteLine($"expected: {receivers.Length} receivers, {nodes.Length} nodes; {gone.Count} gone");
            await Listed(registry, discovery, spotDiscovery, receivers, nodes, "the run");
            foreach (Member m in live)
            {
                Assert.That(m.Receiver?.GetRegistrationState(Service) ?? m.Node!.GetRegistrationState(), Is.EqualTo(RegistrationState.Registered), m.Name);
            }

            foreach (Member m in gone.Where(m => !m.Crashed))
            {
                Assert.That(m.Receiver?.GetRegistrationState(Service) ?? m.Node!.GetRegistrationState(), Is.EqualTo(RegistrationState.NotRegistered), m.Name);
            }

            // Stays so: nothing gone comes back with a late REGISTER.
            await Task.Delay(at.BroadcastInterval * 2, Wait.Token);
            await Listed(registry, discovery, spotDiscovery, receivers, nodes, "the run, a little later");
            await Reach(gateway, live.Where(m => m.Receiver is not null).Select(m => m.Receiver!));
        }
        finally
        {
            foreach (Member m in live.Concat(gone).Where(m => !m.Crashed))
            {
                await m.DisposeAsync();
            }

            if (registry is not null)
            {
                await registry.DisposeAsync();
            }
        }
    }

    /// <summary>Waits for a member's RegisterAsync: true when it registered, false when it was cancelled.</summary>
    private static async Task<bool> Settled(Member m)
    {
        try
        {
            await m.Registering!.WaitAsync(TimeSpan.FromSeconds(20), Wait.Token);
            return true;
        }
        catch (OperationCanceledException) when (m.Cancellable && !Wait.Token.IsCancellationRequested)
        {
            return false;
        }
    }
}
