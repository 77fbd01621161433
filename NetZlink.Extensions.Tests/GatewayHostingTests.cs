// The hosted gateway (AddNetZlinkGateway) against a real ZlinkRegistry and real ZlinkReceivers in
// this process: registration and start/stop with the host, the section's settings and their
// check at start (one line per bad key), keyed gateways, and the health check's transitions, with
// the grace period and the registry timeout read from a clock the test moves (no timing).
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using NetZlink.Extensions.Hosting;
using NetZlink.Services;
using NetZlink.Tests;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class GatewayHostingTests
{
    private const string Check = "netzlink-gateway";

    [Test]
    [CancelAfter(60_000)]
    public async Task AHostedGatewaySendsToTheRegisteredReceiversByItsConfiguredWeightsAndStopsWithTheHost(CancellationToken cancellationToken)
    {
        await using var cluster = new Cluster();
        Cluster.Echo light = await cluster.AddReceiverAsync("echo", weight: 1, cancellationToken);
        Cluster.Echo heavy = await cluster.AddReceiverAsync("echo", weight: 3, cancellationToken);
        using IHost host = GatewayHost(
            null,
            ("RegistryEndpoint", cluster.Registry.PubEndpoint),
            ("Services:0", "echo"),
            ("LoadBalancing:echo", "Weighted"),
            ("SendPatience", "00:00:05"),
            ("Health:StartupGracePeriod", "00:00:00"));

        // Injected before the start: made from the options, connected to nothing yet.
        ZlinkGateway gateway = host.Services.GetRequiredService<ZlinkGateway>();
        ZlinkDiscovery discovery = host.Services.GetRequiredService<ZlinkDiscovery>();
        var service = host.Services.GetRequiredService<NetZlinkGatewayService>();
        Assert.Multiple(() =>
        {
            Assert.That(service.Gateway, Is.SameAs(gateway));
            Assert.That(service.Discovery, Is.SameAs(discovery));
            Assert.That(service.StartedAt, Is.Null);
            Assert.That(host.Services.GetServices<IHostedService>(), Does.Contain(service));
        });

        await host.StartAsync(cancellationToken);
        Assert.That(service.StartedAt, Is.Not.Null);
        await discovery.WaitForAsync("echo", r => r.Count == 2, cancellationToken);

        // Until both have answered once (a receiver listed is not yet connected), then 400 more:
        // Weighted gives the receivers 1 and 3 of every 4 in a fixed cycle, so exactly 100 and 300.
        var answers = new HashSet<string>(StringComparer.Ordinal);
        for (int probe = 0; light.Answered == 0 || heavy.Answered == 0; probe++)
        {
            await SendAndReceiveAsync(gateway, $"probe {probe}", cancellationToken);
        }

        int lightBefore = light.Answered, heavyBefore = heavy.Answered;
        const int Messages = 400;
        for (int i = 0; i < Messages; i++)
        {
            Assert.That(gateway.TrySend("echo", System.Text.Encoding.UTF8.GetBytes($"m{i}")), Is.True, $"send {i}");
        }

        for (int i = 0; i < Messages; i++)
        {
            using ServiceMessage reply = await gateway.ReceiveAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
            Assert.That(answers.Add(System.Text.Encoding.UTF8.GetString(reply[0])), Is.True, "an answer came twice");
        }

        Assert.Multiple(() =>
        {
            Assert.That(answers, Is.EquivalentTo(Enumerable.Range(0, Messages).Select(i => $"m{i}")), "every message answered once");
            Assert.That((light.Answered - lightBefore, heavy.Answered - heavyBefore), Is.EqualTo((Messages / 4, 3 * Messages / 4)), "LoadBalancing:echo = Weighted, weights 1 and 3");
        });

        await host.StopAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(() => gateway.TrySend("echo", "after"u8), Throws.InstanceOf<ObjectDisposedException>(), "the host's stop disposed the gateway");
            Assert.That(() => service.Gateway, Throws.InstanceOf<ObjectDisposedException>());
            Assert.That(() => discovery.GetReceivers("echo"), Throws.InstanceOf<ObjectDisposedException>(), "and its discovery");
        });
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task TheHostsStopDrainsTheGatewayAndLogsWhatItFound(CancellationToken cancellationToken)
    {
        await using var cluster = new Cluster();
        Cluster.Echo echo = await cluster.AddReceiverAsync("echo", weight: 1, cancellationToken);
        var logs = new CapturingLoggerProvider();
        using IHost host = Hosts.Build("NetZlink:Gateway", [("RegistryEndpoint", cluster.Registry.PubEndpoint), ("Services:0", "echo")], null, (services, section) =>
        {
            services.AddLogging(b => b.SetMinimumLevel(LogLevel.Trace).AddProvider(logs));
            services.AddNetZlinkGateway(section);
        });
        ZlinkGateway gateway = host.Services.GetRequiredService<ZlinkGateway>();
        await host.StartAsync(cancellationToken);
        await host.Services.GetRequiredService<ZlinkDiscovery>().WaitForAsync("echo", r => r.Count == 1, cancellationToken);
        await SendAndReceiveAsync(gateway, "probe", cancellationToken);

        // Sent, answers not read by the application: the drain at the stop waits for them to arrive.
        const int Messages = 50;
        for (int i = 0; i < Messages; i++)
        {
            Assert.That(gateway.TrySend("echo", System.Text.Encoding.UTF8.GetBytes($"m{i}")), Is.True, $"send {i}");
        }

        await host.StopAsync(cancellationToken);
        LogEntry drained = logs.WithId(1101).Single();
        const int sent = Messages + 1; // and the probe (a TrySend refused before the connection is not sent)
        Assert.Multiple(() =>
        {
            Assert.That(drained.Message, Is.EqualTo($"Gateway gateway drained at the host's stop: {sent} sent, {sent} answers, 0 outstanding (every answer came back)"), logs.Dump());
            Assert.That(echo.Answered, Is.EqualTo(sent));
            Assert.That(() => gateway.TrySend("echo", "after"u8), Throws.InstanceOf<ObjectDisposedException>(), "disposed after the drain");
        });
    }

    [Test]
    public async Task BadGatewaySettingsFailTheStartWithOneLinePerKey()
    {
        string missingCa = Path.Combine(Path.GetTempPath(), $"netzlink-no-such-ca-{Guid.NewGuid():N}.pem");
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["NetZlink:Gateway:RegistryEndpoints:0"] = "tcp://127.0.0.1:5550",
            ["NetZlink:Gateway:RegistryEndpoints:1"] = "udp://127.0.0.1:5550",
            ["NetZlink:Gateway:RegistryEndpoints:x"] = "tcp://127.0.0.1:5551",
            ["NetZlink:Gateway:RegistryTimeout"] = "00:00:00",
            ["NetZlink:Gateway:Services:0"] = "echo",
            ["NetZlink:Gateway:Services:1"] = new string('s', 256),
            ["NetZlink:Gateway:LoadBalancing:echo"] = "7",
            ["NetZlink:Gateway:SendPatience"] = "-00:00:01",
            ["NetZlink:Gateway:Gateway:SendPatience"] = "00:00:01",
            ["NetZlink:Gateway:TlsHostname"] = "backend.example",
            ["NetZlink:Gateway:Health:StartupGracePeriod"] = "-00:00:01",
            ["NetZlink:Gateway:Health:MinimumConnections"] = "1",
            ["NetZlink:Gateway:RegistyEndpoint"] = "tcp://127.0.0.1:5552",
            ["NetZlink:Gateway:RegistryTimeout:Seconds"] = "5",
            ["NetZlink:Other:TlsCaFile"] = missingCa,
        });
        builder.Services.AddNetZlinkGateway(builder.Configuration.GetSection("NetZlink:Gateway"));
        builder.Services.AddKeyedNetZlinkGateway("other", builder.Configuration.GetSection("NetZlink:Other"));
        using IHost host = builder.Build();

        OptionsValidationException refused = await Hosts.Refusal(host);
        string[] expected =
        [
            "NetZlink:Gateway:RegistryEndpoints:1 is 'udp://127.0.0.1:5550': a registry's publish endpoint is tcp://host:port, ipc://path, inproc://name, tls://host:port, ws://host:port[/path] or wss://host:port[/path]",
            "NetZlink:Gateway:RegistryEndpoints:x is not a setting of a NetZlink gateway (RegistryEndpoints is a list: RegistryEndpoints:0, RegistryEndpoints:1 ...)",
            "NetZlink:Gateway:RegistryTimeout must be positive (is 00:00:00)",
            "NetZlink:Gateway:RegistryTimeout:Seconds is not a setting of a NetZlink gateway (RegistryTimeout takes a single value)",
            "NetZlink:Gateway:Services:1 has 256 bytes of UTF-8, more than 255",
            "NetZlink:Gateway:LoadBalancing:echo must be RoundRobin or Weighted (is 7)",
            "NetZlink:Gateway:SendPatience and NetZlink:Gateway:Gateway:SendPatience are both set: a gateway setting goes either in the section or in its Gateway subsection, not both (one would override the other)",
            "NetZlink:Gateway:SendPatience must be positive (is -00:00:01)",
            "NetZlink:Gateway:TlsHostname is set without TlsCaFile or TlsTrustSystem to verify the receivers' certificates against",
            "NetZlink:Gateway:Health:StartupGracePeriod must not be negative (is -00:00:01)",
            "NetZlink:Gateway:Health:MinimumConnections is not a setting of a NetZlink gateway (misspelt? docs/hosting.md lists them)",
            "NetZlink:Gateway:RegistyEndpoint is not a setting of a NetZlink gateway (misspelt? docs/hosting.md lists them)",
            "NetZlink:Other:RegistryEndpoint is not set: name the publish endpoint of the registry to follow (RegistryEndpoint, or RegistryEndpoints:0, RegistryEndpoints:1 ... for several)",
            $"NetZlink:Other:TlsCaFile is '{missingCa}': no such file",
        ];
        Assert.That(refused.Failures, Is.EquivalentTo(expected), string.Join("\n", refused.Failures));
        Assert.That(host.Services.GetRequiredService<NetZlinkGatewayService>().StartedAt, Is.Null, "nothing started");
    }

    [Test]
    public void TheSectionHoldsTheGatewaySettingsBesideTheHostingOnes()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Gw:RegistryEndpoint"] = "tcp://registry-a:5550",
            ["Gw:RegistryEndpoints:0"] = "tcp://registry-b:5550",
            ["Gw:RegistryTimeout"] = "00:00:20",
            ["Gw:Services:0"] = "orders",
            ["Gw:Services:1"] = "prices",
            ["Gw:LoadBalancing:prices"] = "Weighted",
            ["Gw:SendPatience"] = "00:00:00.250",
            ["Gw:TlsTrustSystem"] = "true",
            ["Gw:TlsHostname"] = "receivers.example",
            ["Gw:RoutingId"] = Convert.ToBase64String([7, 8, 9]),
            ["Gw:Health:StartupGracePeriod"] = "00:00:05",
        });
        builder.Services.AddNetZlinkGateway(builder.Configuration.GetSection("Gw"), o => o.Services.Add("added"));
        using IHost host = builder.Build();
        NetZlinkGatewayOptions options = host.Services.GetRequiredService<IOptionsMonitor<NetZlinkGatewayOptions>>().Get(Options.DefaultName);
        Assert.Multiple(() =>
        {
            Assert.That(options.AllRegistryEndpoints().Select(r => r.Endpoint), Is.EqualTo(new[] { "tcp://registry-a:5550", "tcp://registry-b:5550" }));
            Assert.That(options.RegistryTimeout, Is.EqualTo(TimeSpan.FromSeconds(20)));
            Assert.That(options.Services, Is.EqualTo(new[] { "orders", "prices", "added" }), "the configure action runs after the binding");
            Assert.That(options.LoadBalancing, Is.EquivalentTo(new Dictionary<string, LoadBalancing> { ["prices"] = LoadBalancing.Weighted }));
            Assert.That(options.Gateway.SendPatience, Is.EqualTo(TimeSpan.FromMilliseconds(250)));
            Assert.That(options.Gateway.TlsTrustSystem, Is.True);
            Assert.That(options.Gateway.TlsHostname, Is.EqualTo("receivers.example"));
            Assert.That(options.Gateway.RoutingId, Is.EqualTo(new byte[] { 7, 8, 9 }), "a routing id is written in base64");
            Assert.That(options.Health.StartupGracePeriod, Is.EqualTo(TimeSpan.FromSeconds(5)));
        });
    }

    [Test]
    public void KeyedGatewaysAreDistinctInstancesOnOneContextWithTheirOwnOptions()
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddKeyedNetZlinkGateway("a", o => o.RegistryEndpoint = "tcp://127.0.0.1:5550");
        services.AddKeyedNetZlinkGateway("b", o =>
        {
            o.RegistryEndpoint = "tcp://127.0.0.1:5560";
            o.Gateway.RoutingId = [1, 2, 3];
        });
        Assert.Multiple(() =>
        {
            Assert.That(
                () => services.AddKeyedNetZlinkGateway("a", o => o.RegistryEndpoint = "tcp://127.0.0.1:5570"),
                Throws.InvalidOperationException.With.Message.Contains("'a' is registered already"));
            Assert.That(() => services.AddKeyedNetZlinkGateway(" ", o => o.RegistryEndpoint = "tcp://127.0.0.1:5570"), Throws.ArgumentException);
        });
        services.AddNetZlinkGateway(o => o.RegistryEndpoint = "tcp://127.0.0.1:5580");
        Assert.That(
            () => services.AddNetZlinkGateway(o => o.RegistryEndpoint = "tcp://127.0.0.1:5590"),
            Throws.InvalidOperationException.With.Message.Contains("without a key is registered already"));
        services.AddHealthChecks().AddNetZlinkHealthChecks();

        using ServiceProvider provider = services.BuildServiceProvider();
        ZlinkGateway a = provider.GetRequiredKeyedService<ZlinkGateway>("a");
        ZlinkGateway b = provider.GetRequiredKeyedService<ZlinkGateway>("b");
        Assert.Multiple(() =>
        {
            Assert.That(a, Is.Not.SameAs(b));
            Assert.That(provider.GetRequiredKeyedService<ZlinkGateway>("a"), Is.SameAs(a), "one gateway per key");
            Assert.That(provider.GetRequiredKeyedService<ZlinkDiscovery>("a"), Is.Not.SameAs(provider.GetRequiredKeyedService<ZlinkDiscovery>("b")));
            Assert.That(b.RoutingId.ToArray(), Is.EqualTo(new byte[] { 1, 2, 3 }), "b's own options");
            Assert.That(a.RoutingId.ToArray(), Is.Not.EqualTo(new byte[] { 1, 2, 3 }));
            Assert.That(provider.GetRequiredService<ZlinkGateway>(), Is.Not.SameAs(a).And.Not.SameAs(b), "the gateway without a key is a third");
            Assert.That(provider.GetServices<IHostedService>().OfType<NetZlinkGatewayService>().Count(), Is.EqualTo(3), "each gateway is a hosted service");
            Assert.That(services.Count(d => d.ServiceType == typeof(ZlinkContext)), Is.EqualTo(1), "one context for all");
            Assert.That(
                provider.GetRequiredService<IOptions<HealthCheckServiceOptions>>().Value.Registrations.Select(r => r.Name),
                Is.EquivalentTo(new[] { "netzlink-gateway", "netzlink-gateway:a", "netzlink-gateway:b" }));
        });
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task TheHealthCheckFollowsTheRegistryAndTheReceivers(CancellationToken cancellationToken)
    {
        var clock = new ManualClock();
        string registryPub = Local.RefusingEndpoint(); // no registry there yet
        using IHost host = GatewayHost(
            clock,
            ("RegistryEndpoint", registryPub),
            ("RegistryTimeout", "00:00:05"),
            ("Services:0", "echo"),
            ("Health:StartupGracePeriod", "00:00:10"));
        await Expect(host, HealthStatus.Unhealthy, "has not been started");

        await host.StartAsync(cancellationToken);
        await Expect(host, HealthStatus.Healthy, "0 of 1 registries heard, receivers: echo 0 (starting: within the startup grace period)");
        clock.Advance(TimeSpan.FromSeconds(11));
        await Expect(host, HealthStatus.Unhealthy, $"no registry heard from within 00:00:05 ({registryPub}) after the startup grace period");

        // The registry comes up where the gateway looks for it: heard, but nobody registered.
        await using var cluster = new Cluster(registryPub);
        await UntilStatus(host, HealthStatus.Degraded, cancellationToken);
        await Expect(host, HealthStatus.Degraded, "no receivers of echo");

        Cluster.Echo receiver = await cluster.AddReceiverAsync("echo", weight: 1, cancellationToken);
        ZlinkDiscovery discovery = host.Services.GetRequiredService<ZlinkDiscovery>();
        await discovery.WaitForAsync("echo", r => r.Count == 1, cancellationToken);
        await Expect(host, HealthStatus.Healthy, "1 of 1 registries heard, receivers: echo 1");

        await receiver.Receiver.UnregisterAsync("echo");
        await discovery.WaitForAsync("echo", r => r.Count == 0, cancellationToken);
        await Expect(host, HealthStatus.Degraded, "no receivers of echo");

        // The registry goes away; once RegistryTimeout has passed without a word from it, Unhealthy.
        await cluster.DisposeAsync();
        await Expect(host, HealthStatus.Degraded, "no receivers of echo");
        clock.Advance(TimeSpan.FromSeconds(6));
        await Expect(host, HealthStatus.Unhealthy, "no registry heard from within 00:00:05");

        await host.StopAsync(cancellationToken);
        await Expect(host, HealthStatus.Unhealthy, "has stopped");
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task RandomRegistrationsKeepTheHealthCheckEqualToTheModel(CancellationToken cancellationToken)
    {
        // Model: which receiver is registered for which service; after the grace period every
        // configured service without a receiver is named in a Degraded check, else it is Healthy
        // with each service's count; within it the check is Healthy whatever is missing.
        Random random = Fuzz.Random(out int seed);
        string[] services = ["alpha", "beta"];
        var clock = new ManualClock();
        await using var cluster = new Cluster();
        using IHost host = GatewayHost(
            clock,
            ("RegistryEndpoint", cluster.Registry.PubEndpoint),
            ("Services:0", services[0]),
            ("Services:1", services[1]),
            ("Health:StartupGracePeriod", "00:00:10"));
        await host.StartAsync(cancellationToken);
        ZlinkDiscovery discovery = host.Services.GetRequiredService<ZlinkDiscovery>();
        Cluster.Echo[] receivers = [.. await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => cluster.AddReceiverAsync(services[0], 1, cancellationToken)))];
        var registered = new HashSet<(int Receiver, string Service)>(Enumerable.Range(0, 3).Select(r => (r, services[0])));
        bool inGrace = true;
        int steps = Fuzz.Iterations(16);
        for (int step = 0; step < steps; step++)
        {
            string what;
            if (inGrace && (step == steps / 2 || random.Next(6) == 0))
            {
                clock.Advance(TimeSpan.FromSeconds(11));
                inGrace = false;
                what = "the grace period ends";
            }
            else
            {
                int r = random.Next(receivers.Length);
                string service = services[random.Next(services.Length)];
                if (registered.Remove((r, service)))
                {
                    await receivers[r].Receiver.UnregisterAsync(service);
                    what = $"receiver {r} unregisters {service}";
                }
                else
                {
                    await receivers[r].Receiver.RegisterAsync(service, weight: 1, cancellationToken: cancellationToken);
                    registered.Add((r, service));
                    what = $"receiver {r} registers {service}";
                }
            }

            int[] counts = [.. services.Select(s => registered.Count(x => x.Service == s))];
            for (int i = 0; i < services.Length; i++)
            {
                int expected = counts[i];
                using var patience = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
                patience.CancelAfter(TimeSpan.FromSeconds(20));
                await discovery.WaitForAsync(services[i], l => l.Count == expected, patience.Token);
            }

            string[] without = [.. services.Where((_, i) => counts[i] == 0)];
            HealthReportEntry entry = await CheckAsync(host);
            string context = $"step {step} ({what}), seed {seed}: {entry.Description}";
            if (!inGrace && without.Length > 0)
            {
                Assert.That(entry.Status, Is.EqualTo(HealthStatus.Degraded), context);
                Assert.That(entry.Description, Does.EndWith($"no receivers of {string.Join(", ", without)}"), context);
            }
            else
            {
                Assert.That(entry.Status, Is.EqualTo(HealthStatus.Healthy), context);
                string listing = $"receivers: {services[0]} {counts[0]}, {services[1]} {counts[1]}";
                Assert.That(entry.Description, Does.EndWith(inGrace && without.Length > 0 ? listing + " (starting: within the startup grace period)" : listing), context);
            }
        }

        await host.StopAsync(cancellationToken);
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task RefusedRegistryMessagesDegradeTheCheckThatSeesThem(CancellationToken cancellationToken)
    {
        using var context = new ZlinkContext();
        using ZlinkSocket fake = context.CreateSocket(ZlinkSocketType.Pub);
        fake.Linger = 0;
        fake.Bind("tcp://127.0.0.1:*");
        using IHost host = GatewayHost(null, ("RegistryEndpoint", fake.LastEndpoint), ("Health:StartupGracePeriod", "00:00:00"));
        await host.StartAsync(cancellationToken);
        ZlinkDiscovery discovery = host.Services.GetRequiredService<ZlinkDiscovery>();
        // Until the discovery has refused a malformed message and heard a well-formed (empty) list
        // from the same publisher (the SUB joins the publisher in its own time).
        byte[][] emptyList = [.. ServiceProtocol.EncodeServiceList(7, 1, [])];
        while (discovery.RefusedMessages == 0 || discovery.Registries[0].LastHeard is null)
        {
            fake.Send("not a service list"u8);
            fake.SendMultipart(emptyList);
            await Task.Delay(20, cancellationToken);
        }

        HealthReportEntry seen = await CheckAsync(host);
        Assert.That(seen.Status, Is.EqualTo(HealthStatus.Degraded), seen.Description);
        Assert.That(seen.Description, Does.Contain("registry messages refused since the previous check"));

        // Refusals count once: with no new ones the check recovers by itself.
        await UntilStatus(host, HealthStatus.Healthy, cancellationToken);
        await Expect(host, HealthStatus.Healthy, "1 of 1 registries heard, no services configured");
        await host.StopAsync(cancellationToken);
    }

    internal static async Task SendAndReceiveAsync(ZlinkGateway gateway, string body, CancellationToken cancellationToken)
    {
        byte[] payload = System.Text.Encoding.UTF8.GetBytes(body);
        while (!gateway.TrySend("echo", payload))
        {
            await Task.Delay(10, cancellationToken); // listed, not yet connected
        }

        using ServiceMessage reply = await gateway.ReceiveAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
        Assert.That(System.Text.Encoding.UTF8.GetString(reply[0]), Is.EqualTo(body));
    }

    private static IHost GatewayHost(TimeProvider? clock, params (string Key, string Value)[] settings)
        => Hosts.Build("NetZlink:Gateway", settings, clock, (services, section) => services.AddNetZlinkGateway(section));

    private static Task<HealthReportEntry> CheckAsync(IHost host) => Hosts.CheckAsync(host, Check);

    private static Task Expect(IHost host, HealthStatus status, string description) => Hosts.Expect(host, Check, status, description);

    /// <summary>Checks until the status is <paramref name="status"/> (what the check waits for comes over the network).</summary>
    private static async Task UntilStatus(IHost host, HealthStatus status, CancellationToken cancellationToken)
    {
        HealthReportEntry entry = await CheckAsync(host);
        while (entry.Status != status)
        {
            await Task.Delay(20, cancellationToken);
            entry = await CheckAsync(host);
        }
    }

    /// <summary>A registry (broadcasting every 100 ms) and echo receivers registered with it.</summary>
    internal sealed class Cluster : IAsyncDisposable
    {
        private readonly ZlinkContext _context = new();
        private readonly List<Echo> _receivers = [];
        private int _disposed;

        public Cluster(string pubEndpoint = "tcp://127.0.0.1:*", string routerEndpoint = "tcp://127.0.0.1:*", TimeSpan? heartbeatTimeout = null) => Registry = new ZlinkRegistry(_context, new RegistryOptions
        {
            PubEndpoint = pubEndpoint,
            RouterEndpoint = routerEndpoint,
            HeartbeatTimeout = heartbeatTimeout ?? TimeSpan.FromSeconds(5),
            BroadcastInterval = TimeSpan.FromMilliseconds(100),
        });

        public ZlinkRegistry Registry { get; }

        /// <summary>The cluster's context, for the test's own discovery and gateway.</summary>
        public ZlinkContext Context => _context;

        public async Task<Echo> AddReceiverAsync(string service, uint weight, CancellationToken cancellationToken)
        {
            var receiver = new ZlinkReceiver(_context, new ReceiverOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(200) });
            receiver.Bind("tcp://127.0.0.1:*");
            await receiver.ConnectRegistryAsync(Registry.RouterEndpoint);
            await receiver.RegisterAsync(service, weight: weight, cancellationToken: cancellationToken);
            var echo = new Echo(receiver);
            _receivers.Add(echo);
            return echo;
        }

        public async ValueTask DisposeAsync()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0)
            {
                return;
            }

            foreach (Echo e in _receivers)
            {
                await e.Receiver.DisposeAsync();
                await e.Loop;
            }

            await Registry.DisposeAsync();
            _context.Dispose();
        }

        /// <summary>A receiver that answers every message with its parts, counting them.</summary>
        public sealed class Echo
        {
            private int _answered;

            public Echo(ZlinkReceiver receiver)
            {
                Receiver = receiver;
                Loop = Task.Run(async () =>
                {
                    try
                    {
                        await foreach (ServiceMessage m in receiver.Requests.ReadAllAsync())
                        {
                            using (m)
                            {
                                if (receiver.Send(m.Peer, m.GetPartMemory(0).Span))
                                {
                                    Interlocked.Increment(ref _answered);
                                }
                            }
                        }
                    }
                    catch (ObjectDisposedException)
                    {
                    }
                });
            }

            public ZlinkReceiver Receiver { get; }

            public Task Loop { get; }

            public int Answered => Volatile.Read(ref _answered);
        }
    }
}
