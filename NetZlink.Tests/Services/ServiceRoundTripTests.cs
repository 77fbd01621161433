// The service layer end to end in one process: registry, receiver, discovery, gateway, over tcp,
// with short heartbeats so expiry shows within a second.
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(60_000)]
public sealed class ServiceRoundTripTests
{
    internal static RegistryOptions FastRegistry(uint? id = null) => new()
    {
        PubEndpoint = "tcp://127.0.0.1:*",
        RouterEndpoint = "tcp://127.0.0.1:*",
        RegistryId = id,
        HeartbeatInterval = TimeSpan.FromMilliseconds(100),
        HeartbeatTimeout = TimeSpan.FromMilliseconds(600),
        BroadcastInterval = TimeSpan.FromMilliseconds(300),
    };

    internal static ReceiverOptions FastReceiver() => new() { HeartbeatInterval = TimeSpan.FromMilliseconds(100) };

    [Test]
    public async Task A_request_reaches_a_registered_receiver_and_its_answer_comes_back()
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, FastRegistry());
        await using var receiver = new ZlinkReceiver(context, FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
        await receiver.RegisterAsync("echo", cancellationToken: Wait.Token);

        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        IReadOnlyList<ReceiverInfo> seen = await discovery.WaitForAsync("echo", r => r.Count == 1, Wait.Token);
        Assert.That(seen[0].Endpoint, Is.EqualTo(receiver.BoundEndpoint));
        Assert.That(seen[0].RoutingId, Is.EqualTo(receiver.RoutingId));
        Assert.That(seen[0].Weight, Is.EqualTo(1u));

        await using var gateway = new ZlinkGateway(context, discovery);
        await gateway.SendAsync("echo", "ping"u8.ToArray(), Wait.Token);
        using (ServiceMessage request = await receiver.ReceiveAsync(Wait.Token))
        {
            Assert.That(request.PartCount, Is.EqualTo(1));
            Assert.That(request[0].ToArray(), Is.EqualTo("ping"u8.ToArray()));
            Assert.That(request.PeerId(), Is.EqualTo(gateway.RoutingId));
            Assert.That(receiver.Send(request.Peer, "pong"u8), Is.True);
        }

        using ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token);
        Assert.That(reply.Service, Is.EqualTo("echo"));
        Assert.That(reply.PeerId(), Is.EqualTo(receiver.RoutingId));
        Assert.That(reply[0].ToArray(), Is.EqualTo("pong"u8.ToArray()));
        Assert.That(registry.RefusedMessages + discovery.RefusedMessages + receiver.RefusedMessages, Is.Zero, registry.LastRefusal ?? discovery.LastRefusal ?? receiver.LastRefusal);
    }

    [Test]
    public async Task A_receiver_whose_connection_broke_takes_no_more_sends_while_discovery_still_lists_it()
    {
        using var context = new ZlinkContext();
        RegistryOptions slowExpiry = FastRegistry();
        slowExpiry.HeartbeatTimeout = TimeSpan.FromMinutes(5); // discovery keeps listing the dead receiver
        await using var registry = new ZlinkRegistry(context, slowExpiry);
        var receiver = new ZlinkReceiver(context, FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
        await receiver.RegisterAsync("echo", cancellationToken: Wait.Token);

        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        await discovery.WaitForAsync("echo", r => r.Count == 1, Wait.Token);
        await using var gateway = new ZlinkGateway(context, discovery);
        await gateway.SendAsync("echo", "ping"u8.ToArray(), Wait.Token);
        using (ServiceMessage request = await receiver.ReceiveAsync(Wait.Token))
        {
            Assert.That(request[0].ToArray(), Is.EqualTo("ping"u8.ToArray()));
        }

        await receiver.DisposeAsync();
        Wait.Until(() => !gateway.TrySend("echo", "lost?"u8), "the gateway refuses sends to the receiver whose connection broke");
        Assert.That(discovery.GetReceivers("echo"), Has.Count.EqualTo(1), "discovery still lists it (the registry has not expired it)");
        Assert.That(gateway.TrySend("echo", "lost?"u8), Is.False, "and keeps refusing");
    }
}
