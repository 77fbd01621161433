// What a registry answers, what a receiver does with the answer, heartbeat expiry, and the
// refusal of bad arguments.
using System.Diagnostics;
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(60_000)]
public sealed class ServiceRegistrationTests
{
    private static List<byte[]> Ask(ZlinkSocket dealer, List<byte[]> request)
    {
        dealer.SendMultipart([.. request]);
        dealer.ReceiveTimeout = 5000;
        return dealer.ReceiveMultipart();
    }

    [Test]
    public async Task The_registry_answers_each_register_and_update_as_zlink_does()
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        using var dealer = context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.Connect(registry.RouterEndpoint);

        RegisterAckMessage ok = ServiceProtocol.DecodeRegisterAck(Ask(dealer,
            ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Register, ServiceType.Gateway, "svc", "tcp://127.0.0.1:9", 7)));
        Assert.That(ok, Is.EqualTo(new RegisterAckMessage(0, "tcp://127.0.0.1:9", "")));

        List<byte[]> short3 = [ServiceProtocol.U16(ServiceProtocol.Register), ServiceProtocol.U16(1), ServiceProtocol.Text("svc")];
        RegisterAckMessage invalid = ServiceProtocol.DecodeRegisterAck(Ask(dealer, short3));
        Assert.That(invalid.Status, Is.EqualTo(0xFF));
        Assert.That(invalid.Error, Is.EqualTo("REGISTER: 3 frames, not 4 to 5"));

        List<byte[]> emptyEndpoint = [ServiceProtocol.U16(ServiceProtocol.Register), ServiceProtocol.U16(1), ServiceProtocol.Text("svc"), []];
        RegisterAckMessage empty = ServiceProtocol.DecodeRegisterAck(Ask(dealer, emptyEndpoint));
        Assert.That(empty.Status, Is.EqualTo(2));
        Assert.That(empty.Error, Is.EqualTo("REGISTER: frame 3 (endpoint) is empty"));

        RegisterAckMessage notFound = ServiceProtocol.DecodeRegisterAck(Ask(dealer,
            ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.UpdateWeight, ServiceType.Gateway, "other", "tcp://127.0.0.1:9", 2)));
        Assert.That(notFound, Is.EqualTo(new RegisterAckMessage(1, "tcp://127.0.0.1:9", "service not found")));

        RegisterAckMessage updated = ServiceProtocol.DecodeRegisterAck(Ask(dealer,
            ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.UpdateWeight, ServiceType.Gateway, "svc", "tcp://127.0.0.1:9", 0)));
        Assert.That(updated.Status, Is.Zero);
        IReadOnlyList<ReceiverInfo> listed = await registry.GetReceiversAsync();
        Assert.That(listed.Single().Weight, Is.EqualTo(1u), "weight 0 counts as 1");
        Assert.That(listed.Single().RoutingId, Is.EqualTo(new RoutingId(dealer.GetOptionBytes(SocketOption.RoutingId))), "listed under the sender's routing id");
        Assert.That(registry.RefusedMessages, Is.EqualTo(2));

        // SPOT nodes are kept apart from gateway receivers.
        Ask(dealer, ServiceProtocol.EncodeRegistryRequest(ServiceProtocol.Register, ServiceType.Spot, "svc", "tcp://127.0.0.1:10", 1));
        Assert.That(await registry.GetReceiversAsync(ServiceType.Spot), Has.Count.EqualTo(1));
        Assert.That(await registry.GetReceiversAsync(ServiceType.Gateway), Has.Count.EqualTo(1));
    }

    [Test]
    public async Task A_refused_registration_throws_with_the_registrys_status_and_reason()
    {
        using var context = new ZlinkContext();
        using var fake = context.CreateSocket(ZlinkSocketType.Router);
        fake.Bind("tcp://127.0.0.1:*");
        await using var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(fake.LastEndpoint);
        Task register = receiver.RegisterAsync("svc", cancellationToken: Wait.Token);

        fake.ReceiveTimeout = 5000;
        List<byte[]> request = fake.ReceiveMultipart();
        Assert.That(request[0], Is.EqualTo(receiver.RoutingId.ToArray()), "the registry connection carries the receiver's routing id");
        RegistryRequest decoded = ServiceProtocol.DecodeRegistryRequest(request.GetRange(1, request.Count - 1));
        Assert.That(decoded, Is.EqualTo(new RegistryRequest(ServiceProtocol.Register, ServiceType.Gateway, "svc", receiver.BoundEndpoint!, 1)));
        fake.SendMultipart([request[0], .. ServiceProtocol.EncodeRegisterAck(2, decoded.Endpoint, "invalid endpoint")]);

        var e = Assert.ThrowsAsync<ServiceRegistrationException>(() => register);
        Assert.That(e!.Status, Is.EqualTo(2));
        Assert.That(e.RegistryError, Is.EqualTo("invalid endpoint"));
        Assert.That(e.Message, Does.Contain("REGISTER svc at " + decoded.Endpoint));

        // Refused: no heartbeats for it.
        fake.ReceiveTimeout = 400;
        var more = new List<byte[]>();
        Assert.That(fake.TryReceiveMultipart(more, TimeSpan.FromMilliseconds(400)), Is.False, "no HEARTBEAT after a refusal");
    }

    [Test]
    public async Task Heartbeats_keep_a_receiver_listed_and_it_expires_when_they_stop()
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        await using var discovery = new ZlinkDiscovery(context);
        System.Threading.Channels.ChannelReader<DiscoveryUpdate> stream = discovery.Updates; // kept from now on
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
        await receiver.RegisterAsync("beat", cancellationToken: Wait.Token);
        await discovery.WaitForAsync("beat", r => r.Count == 1, Wait.Token);

        // Three heartbeat timeouts (600 ms each) pass: the heartbeats (every 100 ms) keep it.
        var updates = new List<DiscoveryUpdate>();
        await Task.Delay(1800, Wait.Token);
        Assert.That(discovery.ReceiverCount("beat"), Is.EqualTo(1), "still listed while heartbeating");

        var clock = Stopwatch.StartNew();
        await receiver.DisposeAsync(); // heartbeats stop, no UNREGISTER
        await discovery.WaitForAsync("beat", r => r.Count == 0, Wait.Token);
        TestContext.Out.WriteLine($"expired {clock.ElapsedMilliseconds} ms after the last heartbeat stopped (timeout 600 ms)");
        Assert.That(clock.Elapsed, Is.InRange(TimeSpan.FromMilliseconds(400), TimeSpan.FromMilliseconds(2000)));
        while (stream.TryRead(out DiscoveryUpdate? u))
        {
            updates.Add(u);
        }

        Assert.That(updates.Select(u => u.Receivers.Count), Is.EqualTo(new[] { 1, 0 }), "the update stream: listed, then gone");
    }

    [Test]
    public async Task Bad_arguments_are_refused_with_the_reason()
    {
        using var context = new ZlinkContext();
        await using var receiver = new ZlinkReceiver(context);
        Assert.ThrowsAsync<InvalidOperationException>(() => receiver.RegisterAsync("svc", "tcp://127.0.0.1:1"), "register before connecting to a registry");
        Assert.ThrowsAsync<ArgumentException>(() => receiver.RegisterAsync(""));
        Assert.That(Assert.ThrowsAsync<ArgumentException>(() => receiver.RegisterAsync("a\0b"))!.Message, Does.Contain("NUL"));
        Assert.That(Assert.ThrowsAsync<ArgumentException>(() => receiver.RegisterAsync(new string('x', 256)))!.Message, Does.Contain("256 bytes"));
        Assert.That(Assert.ThrowsAsync<ArgumentException>(() => receiver.RegisterAsync("\ud800"))!.Message, Does.Contain("surrogate"));
        Assert.Throws<ArgumentException>(() => _ = new ZlinkRegistry(context, new RegistryOptions { PubEndpoint = "tcp://127.0.0.1:*" }));
        Assert.Throws<ArgumentOutOfRangeException>(() => _ = new ZlinkRegistry(context, new RegistryOptions
        {
            PubEndpoint = "tcp://127.0.0.1:*", RouterEndpoint = "tcp://127.0.0.1:*", HeartbeatTimeout = TimeSpan.Zero,
        }));
        Assert.Throws<EndpointException>(() => _ = new ZlinkRegistry(context, new RegistryOptions { PubEndpoint = "tcp://127.0.0.1:no-port", RouterEndpoint = "tcp://127.0.0.1:*" }));
        await using var discovery = new ZlinkDiscovery(context);
        await using var gateway = new ZlinkGateway(context, discovery);
        Assert.That(gateway.TrySend("nobody", "x"u8), Is.False, "no receiver: not sent");
        Assert.That(Assert.Throws<ServiceUnavailableException>(() => gateway.Send("nobody", "x"u8))!.Message, Does.Contain("'nobody'"));
        await using var spot = new ZlinkDiscovery(context, ServiceType.Spot);
        Assert.Throws<ArgumentException>(() => _ = new ZlinkGateway(context, spot));
    }
}
