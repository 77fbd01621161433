// Opt-in interop (ZLINK_REFERENCE_LIBRARY), as ServiceInteropTests: a zlink registry (zlink's own
// C registry, or NetZlink's on the reference library) is killed and started again on the same
// endpoints; NetZlink's receiver and SPOT node register again on their own and the new registry
// lists them, so the re-registration is plain zlink REGISTER on the wire.
using NetZlink.Services;

namespace NetZlink.Tests.Services;

public sealed partial class ServiceInteropTests
{
    [TestCase("zlink")]
    [TestCase("managed")]
    public async Task A_NetZlink_receiver_and_spot_node_are_listed_again_when_a_zlink_registry_restarts(string kind)
    {
        string pub = FreeTcp(), router = FreeTcp();
        var registry = new Peer(kind, "registry", pub, router, "2000", "300", "60");
        try
        {
            await registry.LineAsync("READY");
            using var context = new ZlinkContext();
            await using var receiver = new ZlinkReceiver(context, new ReceiverOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(200) });
            receiver.Bind("tcp://127.0.0.1:*");
            var changes = receiver.RegistrationChanges;
            await receiver.ConnectRegistryAsync(router);
            await receiver.RegisterAsync(Service, cancellationToken: Wait.Token);
            await using var node = new ZlinkSpotNode(context, new SpotNodeOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(200) });
            node.Bind("tcp://127.0.0.1:*");
            var nodeChanges = node.RegistrationChanges;
            await node.ConnectRegistryAsync(router);
            await node.RegisterAsync(cancellationToken: Wait.Token);
            Assert.That((await changes.ReadAsync(Wait.Token)).Kind, Is.EqualTo(RegistrationChangeKind.Registered));
            Assert.That((await nodeChanges.ReadAsync(Wait.Token)).Kind, Is.EqualTo(RegistrationChangeKind.Registered));
            using var stop = new CancellationTokenSource();
            Task echo = EchoAsync(receiver, stop.Token);
            await RoundTripsAsync(context, pub, 20, "net:");

            for (int restart = 1; restart <= 2; restart++)
            {
                await registry.DisposeAsync(); // killed: no goodbye
                Assert.That((await changes.ReadAsync(Wait.Token)).Kind, Is.EqualTo(RegistrationChangeKind.Lost));
                Assert.That((await nodeChanges.ReadAsync(Wait.Token)).Kind, Is.EqualTo(RegistrationChangeKind.Lost));
                registry = new Peer(kind, "registry", pub, router, "2000", "300", "60");
                await registry.LineAsync("READY");
                RegistrationChange again = await changes.ReadAsync(Wait.Token);
                Assert.That(again.Kind, Is.EqualTo(RegistrationChangeKind.Reregistered), again.Reason);
                Assert.That((await nodeChanges.ReadAsync(Wait.Token)).Kind, Is.EqualTo(RegistrationChangeKind.Reregistered));

                // The new registry lists both: a NetZlink gateway and zlink's gateway reach the receiver,
                // a SPOT discovery sees the node.
                await RoundTripsAsync(context, pub, 20, "net:");
                await using (var zlinkGateway = new Peer(kind, "gateway", pub, Service, "20", "20"))
                {
                    await zlinkGateway.LineAsync("PASS gateway 20");
                }

                await using var spotDiscovery = new ZlinkDiscovery(context, ServiceType.Spot);
                await spotDiscovery.ConnectRegistryAsync(pub);
                await spotDiscovery.WaitForAsync(ZlinkSpotNode.DefaultServiceName, r => r.Any(n => n.Endpoint == node.BoundEndpoint), Wait.Token);
            }

            await stop.CancelAsync();
            await echo;
            Assert.That(receiver.RefusedMessages + node.RefusedMessages, Is.Zero, receiver.LastRefusal ?? node.LastRefusal);
            await registry.FinishAsync();
        }
        finally
        {
            await registry.DisposeAsync();
        }
    }

    /// <summary>The difference, shown: after a registry restarts (a raw ROUTER takes its endpoint,
    /// to see the bytes), zlink's receiver never registers again (at most it heartbeats, which a
    /// registry ignores for a receiver it does not hold); NetZlink's receiver on the reference
    /// library sends REGISTER first.</summary>
    [TestCase("zlink")]
    [TestCase("managed")]
    public async Task After_a_registry_restart_zlink_s_receiver_does_not_register_again_and_NetZlink_s_does(string kind)
    {
        using var context = new ZlinkContext();
        RegistryOptions options = ServiceRoundTripTests.FastRegistry();
        options.PubEndpoint = FreeTcp();
        options.RouterEndpoint = FreeTcp();
        var registry = new ZlinkRegistry(context, options);
        await using var receiver = new Peer(kind, "receiver", registry.RouterEndpoint, FreeTcp(), Service, "1", "60");
        await receiver.LineAsync("READY");
        Assert.That(await registry.GetReceiversAsync(), Has.Count.EqualTo(1));
        await registry.DisposeAsync();

        using ZlinkSocket restarted = context.CreateSocket(ZlinkSocketType.Router);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (true)
        {
            try
            {
                restarted.Bind(options.RouterEndpoint);
                break;
            }
            catch (EndpointException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(20, Wait.Token);
            }
        }

        if (kind == "managed")
        {
            var first = new List<byte[]>();
            Assert.That(restarted.TryReceiveMultipart(first, TimeSpan.FromSeconds(15)), Is.True, "the receiver sent nothing to the restarted registry");
            RegistryRequest request = ServiceProtocol.DecodeRegistryRequest(first.GetRange(1, first.Count - 1));
            Assert.That((request.MessageId, request.Service), Is.EqualTo((ServiceProtocol.Register, Service)), "NetZlink's receiver registers again, first thing");
        }
        else
        {
            // Two of zlink's 5 s heartbeat intervals: whatever comes (HEARTBEATs, when its heartbeat
            // DEALER wins the routing id; nothing, when its main DEALER does), no REGISTER.
            var seen = new List<string>();
            var message = new List<byte[]>();
            var until = DateTime.UtcNow + TimeSpan.FromSeconds(11);
            while (DateTime.UtcNow < until)
            {
                message.Clear();
                if (restarted.TryReceiveMultipart(message, TimeSpan.FromMilliseconds(200)))
                {
                    RegistryRequest request = ServiceProtocol.DecodeRegistryRequest(message.GetRange(1, message.Count - 1));
                    seen.Add($"0x{request.MessageId:x4} {request.Service}");
                }
            }

            TestContext.Out.WriteLine($"zlink's receiver sent the restarted registry: [{string.Join(", ", seen)}]");
            Assert.That(seen, Has.None.StartsWith($"0x{ServiceProtocol.Register:x4}"), "zlink 1.3's receiver does not register again");
        }

        await receiver.FinishAsync();
    }
}
