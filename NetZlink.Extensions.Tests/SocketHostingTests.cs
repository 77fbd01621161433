// Hosted plain sockets (AddNetZlinkSocket) against peer sockets the test binds and connects: the
// configured options on the socket, bind and connect at the host's start, close at its stop; the
// check at start (one line per bad key); keyed sockets; and the health check from the socket's
// connection watch on a clock the test moves, with a randomized run against a model.
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink.Extensions.Hosting;
using NetZlink.Tests;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class SocketHostingTests
{
    [Test]
    [CancelAfter(60_000)]
    public async Task HostedSocketsTakeTheirOptionsBindAndConnectAtTheStartAndCloseAtTheStop(CancellationToken cancellationToken)
    {
        using var context = new ZlinkContext();
        using ZlinkSocket peer = context.CreateSocket(ZlinkSocketType.Router);
        peer.Bind("tcp://127.0.0.1:*");
        using ZlinkSocket publisher = context.CreateSocket(ZlinkSocketType.Pub);
        publisher.Bind("tcp://127.0.0.1:*");
        using IHost host = SocketHost(
            null,
            ("back:Type", "dealer"),
            ("back:Connect:0", peer.LastEndpoint),
            ("back:RoutingId", Convert.ToBase64String("back-1"u8.ToArray())),
            ("back:Linger", "250"),
            ("back:SendHighWaterMark", "5000"),
            ("back:ReceiveHighWaterMark", "6000"),
            ("back:ReconnectInterval", "50"),
            ("back:ReconnectIntervalMax", "1000"),
            ("back:HeartbeatInterval", "1000"),
            ("back:HeartbeatTimeout", "3000"),
            ("back:HeartbeatTtl", "5000"),
            ("back:Health:StartupGracePeriod", "00:00:00"),
            ("front:Type", "Router"),
            ("front:Bind:0", "tcp://127.0.0.1:*"),
            ("feed:Type", "SUB"),
            ("feed:Connect:0", publisher.LastEndpoint),
            ("feed:Subscribe:0", "a"));

        ZlinkSocket back = host.Services.GetRequiredKeyedService<ZlinkSocket>("back");
        var backService = host.Services.GetRequiredKeyedService<NetZlinkSocketService>("back");
        Assert.Multiple(() =>
        {
            Assert.That(backService.Socket, Is.SameAs(back));
            Assert.That(back.Type, Is.EqualTo(ZlinkSocketType.Dealer));
            Assert.That(back.RoutingId.ToArray(), Is.EqualTo("back-1"u8.ToArray()), "RoutingId, base64");
            Assert.That(back.Linger, Is.EqualTo(250));
            Assert.That(back.SendHighWaterMark, Is.EqualTo(5000));
            Assert.That(back.ReceiveHighWaterMark, Is.EqualTo(6000));
            Assert.That(back.ReconnectInterval, Is.EqualTo(50));
            Assert.That(back.ReconnectIntervalMax, Is.EqualTo(1000));
            Assert.That(back.HeartbeatInterval, Is.EqualTo(1000));
            Assert.That(back.HeartbeatTimeout, Is.EqualTo(3000));
            Assert.That(back.HeartbeatTtl, Is.EqualTo(5000));
            Assert.That(backService.StartedAt, Is.Null);
        });
        await Hosts.Expect(host, "netzlink-socket:back", HealthStatus.Unhealthy, "NetZlink socket 'back' (Dealer) has not been started");

        await host.StartAsync(cancellationToken);

        // back: connected to the peer, which sees the configured routing id.
        await back.SendAsync("hello"u8.ToArray(), SendFlags.None, cancellationToken);
        List<byte[]> got = await peer.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
        Assert.That(got.Select(f => System.Text.Encoding.UTF8.GetString(f)), Is.EqualTo(new[] { "back-1", "hello" }));
        await peer.SendMultipartAsync([got[0], "hi"u8.ToArray()], cancellationToken);
        List<byte[]> answer = await back.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
        Assert.That(answer.Single(), Is.EqualTo("hi"u8.ToArray()));
        await Local.Until(() => backService.ConnectedEndpoints().Length == 1, "the watch saw the connection");
        await Hosts.Expect(host, "netzlink-socket:back", HealthStatus.Healthy, "NetZlink socket 'back' (Dealer): 1 of 1 connect endpoints connected, 1 live connections");

        // front: bound where the start put it; a peer that connects reaches it.
        var frontService = host.Services.GetRequiredKeyedService<NetZlinkSocketService>("front");
        ZlinkSocket front = host.Services.GetRequiredKeyedService<ZlinkSocket>("front");
        string frontEndpoint = frontService.BoundEndpoints.Single();
        Assert.That(frontEndpoint, Does.StartWith("tcp://127.0.0.1:").And.Not.EndWith("*"));
        using (ZlinkSocket client = context.CreateSocket(ZlinkSocketType.Dealer))
        {
            client.Connect(frontEndpoint);
            await client.SendAsync("to front"u8.ToArray(), SendFlags.None, cancellationToken);
            List<byte[]> atFront = await front.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
            Assert.That(atFront[^1], Is.EqualTo("to front"u8.ToArray()));
        }

        await Hosts.Expect(host, "netzlink-socket:front", HealthStatus.Healthy, $"NetZlink socket 'front' (Router): bound {frontEndpoint}");

        // feed: subscribed to "a" only.
        ZlinkSocket feed = host.Services.GetRequiredKeyedService<ZlinkSocket>("feed");
        byte[]? received = null;
        for (int i = 0; received is null; i++)
        {
            publisher.Send(System.Text.Encoding.UTF8.GetBytes($"b{i}"));
            publisher.Send(System.Text.Encoding.UTF8.GetBytes($"a{i}"));
            byte[] buffer = new byte[64];
            if (feed.TryReceive(buffer, TimeSpan.FromMilliseconds(20), out int size))
            {
                received = buffer[..size];
            }
        }

        Assert.That(received[0], Is.EqualTo((byte)'a'), "Subscribe:0 = a");

        await host.StopAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(back.IsDisposed && front.IsDisposed && feed.IsDisposed, Is.True, "the stop closed every socket");
            Assert.That(() => backService.Socket, Throws.InstanceOf<ObjectDisposedException>());
        });
        await Hosts.Expect(host, "netzlink-socket:back", HealthStatus.Unhealthy, "has stopped");
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task AHostedXsubSubscribesBySendingTheSubscriptionAndReceivesOnlyItsPrefix(CancellationToken cancellationToken)
    {
        using var context = new ZlinkContext();
        using ZlinkSocket publisher = context.CreateSocket(ZlinkSocketType.XPub);
        publisher.Bind("tcp://127.0.0.1:*");
        using IHost host = SocketHost(null, ("up:Type", "XSub"), ("up:Connect:0", publisher.LastEndpoint), ("up:Subscribe:0", "a"));
        await host.StartAsync(cancellationToken);
        ZlinkSocket up = host.Services.GetRequiredKeyedService<ZlinkSocket>("up");

        // The XPUB sees the subscription message the XSUB sent (1, then the prefix) once connected.
        List<byte[]> subscription = await publisher.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
        Assert.That(subscription.Single(), Is.EqualTo(new byte[] { 1, (byte)'a' }));

        // b1 goes out before a1 and a2: the XSUB takes a1, then a2 (b1 was filtered out between them).
        publisher.Send("b1"u8);
        publisher.Send("a1"u8);
        publisher.Send("b2"u8);
        publisher.Send("a2"u8);
        List<byte[]> first = await up.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
        List<byte[]> second = await up.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
        Assert.That(new[] { first.Single(), second.Single() }, Is.EqualTo(new[] { "a1"u8.ToArray(), "a2"u8.ToArray() }));
        await host.StopAsync(cancellationToken);
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task AHostWithALingerForeverDealerHoldingAMessageStopsAndDisposesWithinItsShutdownTimeout(CancellationToken cancellationToken)
    {
        string absent = Local.RefusingEndpoint();
        IHost host = Hosts.Build("NetZlink:Sockets", [("d:Type", "Dealer"), ("d:Connect:0", absent), ("d:Linger", "-1")], null, (services, section) =>
        {
            services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(1));
            services.AddNetZlinkSocket("d", section.GetSection("d"));
        });
        await host.StartAsync(cancellationToken);
        ZlinkSocket dealer = host.Services.GetRequiredKeyedService<ZlinkSocket>("d");
        Assert.That(dealer.TrySend("held"u8), Is.True, "queued for the absent peer");

        // The application's own socket on the shared context, Linger -1 and a message held too.
        ZlinkSocket own = host.Services.GetRequiredService<ZlinkContext>().CreateSocket(ZlinkSocketType.Dealer);
        own.Linger = -1;
        own.Connect(absent);
        Assert.That(own.TrySend("held too"u8), Is.True);

        // Both used to wait for ever (the socket's close, then the context's disposal); the bound is
        // the shutdown timeout, so a generous margin tells a bounded wait from a hang.
        Task stopAndDispose = Task.Run(async () =>
        {
            await host.StopAsync(CancellationToken.None);
            host.Dispose();
        }, CancellationToken.None);
        Assert.That(async () => await stopAndDispose.WaitAsync(TimeSpan.FromSeconds(60), cancellationToken), Throws.Nothing, "stop and dispose end");
        Assert.That(dealer.IsDisposed, Is.True);
    }

    [Test]
    public async Task BadSocketSettingsFailTheStartWithOneLinePerKey()
    {
        string missing = Path.Combine(Path.GetTempPath(), $"netzlink-no-such-ca-{Guid.NewGuid():N}.pem");
        using IHost host = SocketHost(
            null,
            ("a:Type", "Req"),
            ("a:Bind:0", "udp://127.0.0.1:1"),
            ("a:Connect", "tcp://127.0.0.1:2"),
            ("a:Linger", "-2"),
            ("a:SendHighWaterMark", "-1"),
            ("a:ReconnectInterval", "-5"),
            ("a:HeartbeatTtl", "50"),
            ("a:HeartbeatTimeout", "-1"),
            ("a:Lingr", "5"),
            ("a:Tls:CaFile", missing),
            ("a:Tls:Hostname", "peer.example"),
            ("b:Type", "stream"),
            ("b:Bind:0", "tls://127.0.0.1:*"),
            ("b:Connect:0", "ipc:///tmp/x"),
            ("b:HeartbeatInterval", "1000"),
            ("b:Subscribe:0", "a"),
            ("b:RoutingId", Convert.ToBase64String(new byte[256])),
            ("c:Bind", ""),
            ("c:Reconnect", "true"));

        OptionsValidationException refused = await Hosts.Refusal(host);
        string[] expected =
        [
            "NetZlink:Sockets:a:Type is 'Req': a socket type is Pair, Pub, Sub, Dealer, Router, XPub, XSub or Stream",
            "NetZlink:Sockets:a:Bind:0 is 'udp://127.0.0.1:1': a socket endpoint is tcp://host:port, ipc://path, inproc://name, tls://host:port, ws://host:port[/path] or wss://host:port[/path]",
            "NetZlink:Sockets:a:Connect is 'tcp://127.0.0.1:2': Connect is a list (Connect:0, Connect:1 ...), not a single value",
            "NetZlink:Sockets:a:Linger must be at least -1 (is -2)",
            "NetZlink:Sockets:a:SendHighWaterMark must be at least 0 (is -1)",
            "NetZlink:Sockets:a:ReconnectInterval must be at least -1 (is -5)",
            "NetZlink:Sockets:a:HeartbeatTimeout must be at least 0 (is -1)",
            "NetZlink:Sockets:a:HeartbeatTtl must be 0 or from 100 to 6553599 ms: the wire carries it in tenths of a second, 16 bits (is 50)",
            "NetZlink:Sockets:a:Lingr is not a setting of a NetZlink socket (misspelt? docs/hosting.md lists them)",
            $"NetZlink:Sockets:a:Tls:CaFile is '{missing}': no such file",
            "NetZlink:Sockets:b:Bind:0 is 'tls://127.0.0.1:*': binding a TLS endpoint needs Tls:CertificateFile (and Tls:KeyFile unless the key is in it)",
            "NetZlink:Sockets:b:Connect:0 is 'ipc:///tmp/x': a STREAM socket's endpoint is tcp://host:port, tls://host:port, ws://host:port[/path] or wss://host:port[/path]",
            "NetZlink:Sockets:b:HeartbeatInterval is set on a STREAM socket: STREAM sockets have no heartbeats (TcpKeepalive is theirs)",
            "NetZlink:Sockets:b:Subscribe is set on a Stream socket: only SUB and XSUB sockets subscribe",
            "NetZlink:Sockets:b:RoutingId must have 1 to 255 bytes (has 256)",
            "NetZlink:Sockets:c:Type is not set: a socket type is Pair, Pub, Sub, Dealer, Router, XPub, XSub or Stream",
            "NetZlink:Sockets:c:Connect and Bind are empty: name at least one endpoint to bind (Bind:0) or to connect to (Connect:0)",
            "NetZlink:Sockets:c:Reconnect is not a setting of a NetZlink socket (misspelt? docs/hosting.md lists them)",
        ];
        Assert.That(refused.Failures, Is.EquivalentTo(expected), string.Join("\n", refused.Failures));
    }

    [Test]
    public void KeyedSocketsAreDistinctInstancesWithTheirOwnOptionsAndChecks()
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddNetZlinkSocket("x", o =>
        {
            o.Type = "Pair";
            o.Bind.Add("inproc://x");
        });
        services.AddNetZlinkSocket("y", o =>
        {
            o.Type = "Pub";
            o.Bind.Add("inproc://y");
            o.SendHighWaterMark = 7;
        });
        Assert.Multiple(() =>
        {
            Assert.That(() => services.AddNetZlinkSocket("x", o => o.Type = "Pair"), Throws.InvalidOperationException.With.Message.EqualTo("A NetZlink socket with the key 'x' is registered already."));
            Assert.That(() => services.AddNetZlinkSocket(" ", o => o.Type = "Pair"), Throws.ArgumentException);
        });
        services.AddHealthChecks().AddNetZlinkHealthChecks();
        using ServiceProvider provider = services.BuildServiceProvider();
        ZlinkSocket x = provider.GetRequiredKeyedService<ZlinkSocket>("x");
        ZlinkSocket y = provider.GetRequiredKeyedService<ZlinkSocket>("y");
        Assert.Multiple(() =>
        {
            Assert.That((x.Type, y.Type), Is.EqualTo((ZlinkSocketType.Pair, ZlinkSocketType.Pub)));
            Assert.That(provider.GetRequiredKeyedService<ZlinkSocket>("x"), Is.SameAs(x), "one socket per key");
            Assert.That(y.SendHighWaterMark, Is.EqualTo(7), "y's own options");
            Assert.That(x.Context, Is.SameAs(y.Context).And.SameAs(provider.GetRequiredService<ZlinkContext>()), "one context for all");
            Assert.That(provider.GetServices<IHostedService>().OfType<NetZlinkSocketService>().Count(), Is.EqualTo(2));
            Assert.That(
                provider.GetRequiredService<IOptions<HealthCheckServiceOptions>>().Value.Registrations.Select(r => r.Name),
                Is.EquivalentTo(new[] { "netzlink-socket:x", "netzlink-socket:y" }));
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task RandomPeersComingAndGoingKeepTheHealthCheckEqualToTheModel(CancellationToken cancellationToken)
    {
        // Model: which of the peers listens now; a connect endpoint is connected exactly when its
        // peer listens; a peer that stops loses the connection once, seen by the next check only.
        Random random = Fuzz.Random(out int seed);
        using var context = new ZlinkContext();
        string[] endpoints = [.. Enumerable.Range(0, 3).Select(_ => Local.RefusingEndpoint())];
        var peers = new ZlinkSocket?[endpoints.Length];
        var clock = new ManualClock();
        var settings = new List<(string, string)> { ("d:Type", "Dealer"), ("d:ReconnectInterval", "20"), ("d:Health:StartupGracePeriod", "00:00:10") };
        settings.AddRange(endpoints.Select((e, i) => ($"d:Connect:{i}", e)));
        using IHost host = SocketHost(clock, [.. settings]);
        var service = host.Services.GetRequiredKeyedService<NetZlinkSocketService>("d");
        await host.StartAsync(cancellationToken);
        bool inGrace = true;
        try
        {
            int steps = Fuzz.Iterations(12);
            for (int step = 0; step < steps; step++)
            {
                string what;
                int lostNow = 0;
                if (inGrace && (step == steps / 2 || random.Next(5) == 0))
                {
                    clock.Advance(TimeSpan.FromSeconds(11));
                    inGrace = false;
                    what = "the grace period ends";
                }
                else
                {
                    int p = random.Next(peers.Length);
                    if (peers[p] is { } running)
                    {
                        running.Dispose();
                        peers[p] = null;
                        lostNow = 1;
                        what = $"peer {p} stops";
                    }
                    else
                    {
                        ZlinkSocket router = context.CreateSocket(ZlinkSocketType.Router);
                        router.Bind(endpoints[p]);
                        peers[p] = router;
                        what = $"peer {p} starts";
                    }
                }

                string[] up = [.. endpoints.Where((_, i) => peers[i] is not null)];
                string[] down = [.. endpoints.Where((_, i) => peers[i] is null)];
                await Local.Until(() => service.ConnectedEndpoints().Order().SequenceEqual(up.Order()), $"the watch to see {string.Join(", ", up)} connected (step {step}, seed {seed})", TimeSpan.FromSeconds(30));
                HealthReportEntry entry = await Hosts.CheckAsync(host, "netzlink-socket:d");
                string context1 = $"step {step} ({what}), seed {seed}: {entry.Status} {entry.Description}";
                string prefix = "NetZlink socket 'd' (Dealer)";
                if (!inGrace && up.Length == 0)
                {
                    Assert.That(entry.Status, Is.EqualTo(HealthStatus.Unhealthy), context1);
                    Assert.That(entry.Description, Is.EqualTo($"{prefix}: no connected peer after the startup grace period (not connected: {string.Join(", ", endpoints)})"), context1);
                    continue;
                }

                var problems = new List<string>();
                if (!inGrace && down.Length > 0)
                {
                    problems.Add($"not connected: {string.Join(", ", down)}");
                }

                if (lostNow > 0)
                {
                    problems.Add($"{lostNow} connections to connect endpoints lost since the previous check");
                }

                if (problems.Count > 0)
                {
                    Assert.That(entry.Status, Is.EqualTo(HealthStatus.Degraded), context1);
                    Assert.That(entry.Description, Is.EqualTo($"{prefix}: {string.Join("; ", problems)}"), context1);
                }
                else
                {
                    Assert.That(entry.Status, Is.EqualTo(HealthStatus.Healthy), context1);
                    string shortfall = down.Length > 0 ? " (starting: within the startup grace period)" : string.Empty;
                    Assert.That(entry.Description, Is.EqualTo($"{prefix}: {up.Length} of {endpoints.Length} connect endpoints connected, {up.Length} live connections{shortfall}"), context1);
                }
            }
        }
        finally
        {
            await host.StopAsync(CancellationToken.None);
            foreach (ZlinkSocket? peer in peers)
            {
                peer?.Dispose();
            }
        }
    }

    private static IHost SocketHost(TimeProvider? clock, params (string Key, string Value)[] settings)
        => Hosts.Build("NetZlink:Sockets", settings, clock, (services, section) =>
        {
            foreach (string key in settings.Select(s => s.Key[..s.Key.IndexOf(':', StringComparison.Ordinal)]).Distinct())
            {
                services.AddNetZlinkSocket(key, section.GetSection(key));
            }
        });
}
