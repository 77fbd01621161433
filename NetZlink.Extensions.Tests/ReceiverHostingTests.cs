// The hosted receiver (AddNetZlinkReceiver) against a real ZlinkRegistry, ZlinkDiscovery and
// ZlinkGateway in this process: registration at the host's start, requests answered by the
// application's own hosted service, unregistration when the host begins to stop (while the
// application still answers), disposal at the stop; the check at start (one line per bad key),
// keyed receivers, and the health check's transitions on a clock the test moves.
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink.Extensions.Hosting;
using NetZlink.Services;
using NetZlink.Tests;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class ReceiverHostingTests
{
    private const string Check = "netzlink-receiver";

    [Test]
    [CancelAfter(60_000)]
    public async Task AHostedReceiverRegistersServesAndUnregistersBeforeTheApplicationStops(CancellationToken cancellationToken)
    {
        // A registry that expires nobody within the test: a receiver that leaves its list left by UNREGISTER.
        await using var cluster = new GatewayHostingTests.Cluster(heartbeatTimeout: TimeSpan.FromMinutes(5));
        await using var discovery = new ZlinkDiscovery(cluster.Context);
        await discovery.ConnectRegistryAsync(cluster.Registry.PubEndpoint);
        await using var gateway = new ZlinkGateway(cluster.Context, discovery);
        using IHost host = ReceiverHost(
            null,
            s => s.AddHostedService<EchoWorker>(), // after the receiver: it stops first
            ("BindEndpoint", "tcp://127.0.0.1:*"),
            ("RegistryEndpoint", cluster.Registry.RouterEndpoint),
            ("Services:0:Name", "echo"),
            ("Services:0:Weight", "3"),
            ("Services:1:Name", "audit"),
            ("HeartbeatInterval", "00:00:00.200"),
            ("DrainDelay", "01:00:00"), // ended by the test's token below
            ("Health:StartupGracePeriod", "00:00:00"));

        var service = host.Services.GetRequiredService<NetZlinkReceiverService>();
        ZlinkReceiver receiver = host.Services.GetRequiredService<ZlinkReceiver>();
        Assert.Multiple(() =>
        {
            Assert.That(service.Receiver, Is.SameAs(receiver));
            Assert.That(service.StartedAt, Is.Null);
            Assert.That(receiver.BoundEndpoint, Is.Null, "bound by the start, not before");
        });
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has not been started");

        await host.StartAsync(cancellationToken);
        IReadOnlyList<ReceiverInfo> echo = await discovery.WaitForAsync("echo", r => r.Count == 1, cancellationToken);
        await discovery.WaitForAsync("audit", r => r.Count == 1, cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(echo[0].Endpoint, Is.EqualTo(receiver.BoundEndpoint));
            Assert.That(echo[0].Weight, Is.EqualTo(3u), "Services:0:Weight");
            Assert.That(echo[0].RoutingId, Is.EqualTo(receiver.RoutingId));
        });
        await Local.Until(() => Hosts.CheckAsync(host, Check).Result.Status == HealthStatus.Healthy, "both registrations acknowledged");
        await Hosts.Expect(host, Check, HealthStatus.Healthy, $"NetZlink receiver 'receiver' at {receiver.BoundEndpoint}: registered echo, audit");

        const int Requests = 200;
        var answers = new HashSet<string>(StringComparer.Ordinal);
        for (int i = 0; i < Requests; i++)
        {
            byte[] payload = System.Text.Encoding.UTF8.GetBytes($"r{i}");
            while (!gateway.TrySend("echo", payload))
            {
                await Task.Delay(10, cancellationToken); // listed, not yet connected
            }
        }

        for (int i = 0; i < Requests; i++)
        {
            using ServiceMessage reply = await gateway.ReceiveAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
            Assert.That(answers.Add(System.Text.Encoding.UTF8.GetString(reply[0])), Is.True, "an answer came twice");
        }

        Assert.That(answers, Is.EquivalentTo(Enumerable.Range(0, Requests).Select(i => $"r{i}")), "every request answered once");

        // The host begins to stop: the receiver unregisters both services first, and while it drains
        // the application (stopped after it) still answers a request that reaches it.
        using var drainEnd = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Task stopping = host.StopAsync(drainEnd.Token);
        await discovery.WaitForAsync("echo", r => r.Count == 0, cancellationToken);
        await discovery.WaitForAsync("audit", r => r.Count == 0, cancellationToken);
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has unregistered: the host is stopping");
        Assert.That(stopping.IsCompleted, Is.False, "the drain lasts until the host's shutdown token");
        using (ZlinkSocket late = cluster.Context.CreateSocket(ZlinkSocketType.Dealer))
        {
            late.Connect(receiver.BoundEndpoint!);
            await late.SendAsync("late"u8.ToArray(), SendFlags.None, cancellationToken);
            List<byte[]> answer = await late.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
            Assert.That(System.Text.Encoding.UTF8.GetString(answer[^1]), Is.EqualTo("late"), "answered during the drain");
        }

        await drainEnd.CancelAsync(); // the host's shutdown timeout, as it were
        await stopping;
        Assert.Multiple(() =>
        {
            Assert.That(() => service.Receiver, Throws.InstanceOf<ObjectDisposedException>(), "the stop disposed the receiver");
            Assert.That(() => receiver.Send([0, 1, 2, 3, 4], "x"u8), Throws.InstanceOf<ObjectDisposedException>());
        });
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has stopped");
    }

    [Test]
    public async Task BadReceiverSettingsFailTheStartWithOneLinePerKey()
    {
        string missing = Path.Combine(Path.GetTempPath(), $"netzlink-no-such-cert-{Guid.NewGuid():N}.pem");
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["R:BindEndpoint"] = "udp://127.0.0.1:7100",
            ["R:Services:0:Name"] = "echo",
            ["R:Services:1:Name"] = "echo",
            ["R:Services:2:Weight"] = "2",
            ["R:Services:3:Name"] = new string('s', 256),
            ["R:Services:3:AdvertiseEndpoint"] = "http://x",
            ["R:Services:4:Nmae"] = "typo",
            ["R:RegisterTimeout"] = "00:00:00",
            ["R:DrainDelay"] = "-00:00:01",
            ["R:HeartbeatInterval"] = "00:00:00",
            ["R:Receiver:HeartbeatInterval"] = "00:00:01",
            ["R:Health"] = "00:00:05",
            ["T:BindEndpoint"] = "tls://127.0.0.1:7101",
            ["T:RegistryEndpoint"] = "tcp://127.0.0.1:5551",
            ["T:Services"] = "echo",
            ["T:TlsCertificateFile"] = missing,
        });
        builder.Services.AddNetZlinkReceiver(builder.Configuration.GetSection("R"));
        builder.Services.AddKeyedNetZlinkReceiver("t", builder.Configuration.GetSection("T"));
        using IHost host = builder.Build();

        OptionsValidationException refused = await Hosts.Refusal(host);
        string[] expected =
        [
            "R:BindEndpoint is 'udp://127.0.0.1:7100': a receiver's endpoint is tcp://host:port, ipc://path, inproc://name, tls://host:port, ws://host:port[/path] or wss://host:port[/path]",
            "R:RegistryEndpoint is not set: name the registry's ROUTER endpoint to register with",
            "R:Services:1:Name is 'echo', registered already by an earlier entry",
            "R:Services:2:Name is empty",
            "R:Services:3:Name has 256 bytes of UTF-8, more than 255",
            "R:Services:3:AdvertiseEndpoint is 'http://x': an advertised endpoint is tcp://host:port, ipc://path, inproc://name, tls://host:port, ws://host:port[/path] or wss://host:port[/path]",
            "R:Services:4:Name is empty",
            "R:Services:4:Nmae is not a setting of a NetZlink receiver (misspelt? docs/hosting.md lists them)",
            "R:RegisterTimeout must be positive (is 00:00:00)",
            "R:DrainDelay must be from 00:00:00 to 01:00:00 (is -00:00:01)",
            "R:HeartbeatInterval and R:Receiver:HeartbeatInterval are both set: a receiver setting goes either in the section or in its Receiver subsection, not both (one would override the other)",
            "R:HeartbeatInterval must be positive (is 00:00:00)",
            "R:Health is '00:00:05': Health is a section (Health:StartupGracePeriod ...), not a single value",
            "T:Services is 'echo': Services is a list (Services:0, Services:1 ...), not a single value",
            "T:Services is empty: name at least one service to register (Services:0:Name, Services:0:Weight)",
            $"T:TlsCertificateFile is '{missing}': no such file",
            "T:TlsKeyFile is not set: a TLS receiver needs both TlsCertificateFile and TlsKeyFile",
        ];
        Assert.That(refused.Failures, Is.EquivalentTo(expected), string.Join("\n", refused.Failures));
        Assert.That(host.Services.GetRequiredService<NetZlinkReceiverService>().StartedAt, Is.Null, "nothing started");
    }

    [Test]
    public async Task AWeightThatDoesNotConvertAndADrainDelayPastTheMaximumAreRefusedNamingTheirKeys()
    {
        // The binder drops a list entry whose value does not convert without a word (the receiver then
        // looked as if it had no services); the check names the key and the rule.
        using IHost host = Hosts.Build("R", [
            ("BindEndpoint", "tcp://127.0.0.1:*"), ("RegistryEndpoint", "tcp://127.0.0.1:5550"),
            ("Services:0:Name", "echo"),
            ("Services:1:Name", "a"), ("Services:1:Weight", "-1"),
            ("Services:2:Name", "b"), ("Services:2:Weight", "99999999999"),
            ("DrainDelay", "50.00:00:00")], null, (services, section) => services.AddNetZlinkReceiver(section));
        OptionsValidationException refused = await Hosts.Refusal(host);
        Assert.That(refused.Failures, Is.EquivalentTo(new[]
        {
            "R:Services:1:Weight is '-1': not a whole number from 0 to 4294967295",
            "R:Services:2:Weight is '99999999999': not a whole number from 0 to 4294967295",
            "R:DrainDelay must be from 00:00:00 to 01:00:00 (is 50.00:00:00)",
        }), string.Join("\n", refused.Failures));
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task TheLongestDrainDelayIsCutByTheShutdownTimeoutWithoutAnError(CancellationToken cancellationToken)
    {
        using IHost host = Hosts.Build("R", [
            ("BindEndpoint", "tcp://127.0.0.1:*"), ("RegistryEndpoint", Local.RefusingEndpoint()),
            ("Services:0:Name", "echo"), ("DrainDelay", NetZlinkReceiverOptions.MaxDrainDelay.ToString("c", System.Globalization.CultureInfo.InvariantCulture))], null, (services, section) =>
        {
            services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromMilliseconds(500));
            services.AddNetZlinkReceiver(section);
        });
        await host.StartAsync(cancellationToken);
        Assert.That(async () => await host.StopAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30), cancellationToken), Throws.Nothing, "the stop ends at the shutdown timeout, without an error");
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has stopped");
    }

    [Test]
    public void KeyedReceiversAreDistinctInstancesWithTheirOwnOptionsAndChecks()
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddKeyedNetZlinkReceiver("a", o => Configure(o, "a"));
        services.AddKeyedNetZlinkReceiver("b", o =>
        {
            Configure(o, "b");
            o.Receiver.RoutingId = [9, 8, 7];
        });
        services.AddNetZlinkReceiver(o => Configure(o, "plain"));
        Assert.Multiple(() =>
        {
            Assert.That(() => services.AddKeyedNetZlinkReceiver("a", o => Configure(o, "x")), Throws.InvalidOperationException.With.Message.EqualTo("A NetZlink receiver with the key 'a' is registered already."));
            Assert.That(() => services.AddNetZlinkReceiver(o => Configure(o, "x")), Throws.InvalidOperationException.With.Message.EqualTo("A NetZlink receiver without a key is registered already: give further receivers a key (AddKeyedNetZlinkReceiver)."));
            Assert.That(() => services.AddKeyedNetZlinkReceiver("", o => Configure(o, "x")), Throws.ArgumentException);
        });
        services.AddHealthChecks().AddNetZlinkHealthChecks();

        using ServiceProvider provider = services.BuildServiceProvider();
        ZlinkReceiver a = provider.GetRequiredKeyedService<ZlinkReceiver>("a");
        ZlinkReceiver b = provider.GetRequiredKeyedService<ZlinkReceiver>("b");
        Assert.Multiple(() =>
        {
            Assert.That(a, Is.Not.SameAs(b));
            Assert.That(provider.GetRequiredKeyedService<ZlinkReceiver>("a"), Is.SameAs(a), "one receiver per key");
            Assert.That(b.RoutingId.ToArray(), Is.EqualTo(new byte[] { 9, 8, 7 }), "b's own options");
            Assert.That(provider.GetRequiredService<ZlinkReceiver>(), Is.Not.SameAs(a).And.Not.SameAs(b));
            Assert.That(provider.GetServices<IHostedService>().OfType<NetZlinkReceiverService>().Count(), Is.EqualTo(3));
            Assert.That(services.Count(d => d.ServiceType == typeof(ZlinkContext)), Is.EqualTo(1), "one context for all");
            Assert.That(
                provider.GetRequiredService<IOptions<HealthCheckServiceOptions>>().Value.Registrations.Select(r => r.Name),
                Is.EquivalentTo(new[] { "netzlink-receiver", "netzlink-receiver:a", "netzlink-receiver:b" }));
        });

        static void Configure(NetZlinkReceiverOptions o, string service)
        {
            o.BindEndpoint = "tcp://127.0.0.1:*";
            o.RegistryEndpoint = "tcp://127.0.0.1:5550";
            o.Services.Add(new NetZlinkReceiverRegistration { Name = service });
        }
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task TheHealthCheckFollowsTheRegistrations(CancellationToken cancellationToken)
    {
        var clock = new ManualClock();
        string registryRouter = Local.RefusingEndpoint(); // no registry there yet
        using IHost host = ReceiverHost(
            clock,
            null,
            ("BindEndpoint", "tcp://127.0.0.1:*"),
            ("RegistryEndpoint", registryRouter),
            ("Services:0:Name", "echo"),
            ("RegisterTimeout", "00:00:00.200"),
            ("HeartbeatInterval", "00:00:00.200"),
            ("DrainDelay", "00:00:00"),
            ("Health:StartupGracePeriod", "00:00:10"));
        await host.StartAsync(cancellationToken);
        await Hosts.Expect(host, Check, HealthStatus.Healthy, "registered none, not yet: echo (");
        await Hosts.Expect(host, Check, HealthStatus.Healthy, "(starting: within the startup grace period)");
        clock.Advance(TimeSpan.FromSeconds(11));
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "no service registered after the startup grace period: echo (");

        // The registry comes up where the receiver looks for it: the REGISTER goes once the connection is up.
        await using var cluster = new GatewayHostingTests.Cluster(routerEndpoint: registryRouter);
        await Local.Until(() => Hosts.CheckAsync(host, Check).Result.Status == HealthStatus.Healthy, "the registration once the registry is up");
        await Hosts.Expect(host, Check, HealthStatus.Healthy, "registered echo");

        await host.StopAsync(cancellationToken);
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has stopped");
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task ARegistryRestartDegradesTheReceiverUntilItRegistersAgainAndTheGatewayReachesItAgain(CancellationToken cancellationToken)
    {
        var clock = new ManualClock();
        string pub = Local.RefusingEndpoint();
        string router = Local.RefusingEndpoint();
        var first = new GatewayHostingTests.Cluster(pub, router);
        using IHost host = ReceiverHost(
            clock,
            s => s.AddHostedService<EchoWorker>(),
            ("BindEndpoint", "tcp://127.0.0.1:*"),
            ("RegistryEndpoint", router),
            ("Services:0:Name", "echo"),
            ("HeartbeatInterval", "00:00:00.200"),
            ("DrainDelay", "00:00:00"),
            ("Health:StartupGracePeriod", "00:00:10"));
        await host.StartAsync(cancellationToken);
        ZlinkReceiver receiver = host.Services.GetRequiredService<ZlinkReceiver>();
        await Local.Until(() => receiver.GetRegistrationState("echo") == RegistrationState.Registered, "registered with the first registry");
        await Hosts.Expect(host, Check, HealthStatus.Healthy, "registered echo");

        // A gateway whose discovery forgets a silent registry's list quickly: it can send to the
        // receiver only while a registry that is up lists it.
        using var gatewayContext = new ZlinkContext();
        await using var discovery = new ZlinkDiscovery(gatewayContext, registryTimeout: TimeSpan.FromMilliseconds(500));
        await discovery.ConnectRegistryAsync(pub);
        await using var gateway = new ZlinkGateway(gatewayContext, discovery);
        await discovery.WaitForAsync("echo", r => r.Count == 1, cancellationToken);
        await GatewayHostingTests.SendAndReceiveAsync(gateway, "before the restart", cancellationToken);

        // The registry goes away: the receiver sees its registration lost, Degraded within the
        // grace period from the loss, Unhealthy after it.
        await first.DisposeAsync();
        await Local.Until(() => receiver.GetRegistrationState("echo") == RegistrationState.Reconnecting, "the loss seen by the receiver");
        await Hosts.Expect(host, Check, HealthStatus.Degraded, "registry connection lost, registering again: echo (the registry connection dropped");
        await discovery.WaitForAsync("echo", r => r.Count == 0, cancellationToken); // the silent registry's list expired
        clock.Advance(TimeSpan.FromSeconds(11));
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "not registered again within 00:00:10 of losing the registry connection: echo (the registry connection dropped");

        // A new registry on the same endpoints: the receiver registers again by itself, and the
        // gateway learns of it from the new registry's list and reaches it.
        await using var second = new GatewayHostingTests.Cluster(pub, router);
        await Local.Until(() => Hosts.CheckAsync(host, Check).Result.Status == HealthStatus.Healthy, "registered again with the new registry");
        await Hosts.Expect(host, Check, HealthStatus.Healthy, $"NetZlink receiver 'receiver' at {receiver.BoundEndpoint}: registered echo");
        Assert.That(receiver.GetRegistrationState("echo"), Is.EqualTo(RegistrationState.Registered));
        await discovery.WaitForAsync("echo", r => r.Count == 1, cancellationToken);
        await GatewayHostingTests.SendAndReceiveAsync(gateway, "after the restart", cancellationToken);

        await host.StopAsync(cancellationToken);
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has stopped");
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task RandomRegistryRestartsKeepTheHealthCheckEqualToTheModel(CancellationToken cancellationToken)
    {
        // Model: the registry is up or down; while it is up both services are registered (Healthy);
        // from the first check that sees them lost, they are Degraded until the grace period has
        // passed on the clock, then Unhealthy, until a registry is up again.
        Random random = Fuzz.Random(out int seed);
        var clock = new ManualClock();
        string pub = Local.RefusingEndpoint();
        string router = Local.RefusingEndpoint();
        GatewayHostingTests.Cluster? registry = new(pub, router);
        using IHost host = ReceiverHost(
            clock,
            null,
            ("BindEndpoint", "tcp://127.0.0.1:*"),
            ("RegistryEndpoint", router),
            ("Services:0:Name", "alpha"),
            ("Services:1:Name", "beta"),
            ("HeartbeatInterval", "00:00:00.200"),
            ("DrainDelay", "00:00:00"),
            ("Health:StartupGracePeriod", "00:00:10"));
        await host.StartAsync(cancellationToken);
        ZlinkReceiver receiver = host.Services.GetRequiredService<ZlinkReceiver>();
        TimeSpan grace = TimeSpan.FromSeconds(10);
        TimeSpan lostFor = TimeSpan.Zero;
        string what = "the start";
        try
        {
            for (int step = 0; step < Fuzz.Iterations(10); step++)
            {
                if (step > 0 && random.Next(3) == 0)
                {
                    TimeSpan by = TimeSpan.FromSeconds(random.Next(1, 13));
                    clock.Advance(by);
                    lostFor += by;
                    what = $"the clock moves {by:c}";
                }
                else if (registry is null)
                {
                    registry = new GatewayHostingTests.Cluster(pub, router);
                    what = "a registry comes up";
                }
                else if (step > 0)
                {
                    await registry.DisposeAsync();
                    registry = null;
                    lostFor = TimeSpan.Zero;
                    what = "the registry goes away";
                }

                RegistrationState wanted = registry is null ? RegistrationState.Reconnecting : RegistrationState.Registered;
                await Local.Until(
                    () => receiver.GetRegistrationState("alpha") == wanted && receiver.GetRegistrationState("beta") == wanted,
                    $"both {wanted} after {what} (step {step}, seed {seed})",
                    TimeSpan.FromSeconds(20));
                HealthReportEntry entry = await Hosts.CheckAsync(host, Check);
                string context = $"step {step} ({what}), seed {seed}: {entry.Description}";
                if (registry is not null)
                {
                    Assert.That(entry.Status, Is.EqualTo(HealthStatus.Healthy), context);
                    Assert.That(entry.Description, Does.EndWith("registered alpha, beta"), context);
                }
                else if (lostFor >= grace)
                {
                    Assert.That(entry.Status, Is.EqualTo(HealthStatus.Unhealthy), context);
                    Assert.That(entry.Description, Does.Contain($"not registered again within 00:00:10 of losing the registry connection: alpha (the registry connection dropped").And.Contain($"{lostFor:c} ago), beta ("), context);
                }
                else
                {
                    Assert.That(entry.Status, Is.EqualTo(HealthStatus.Degraded), context);
                    Assert.That(entry.Description, Does.Contain($"registry connection lost, registering again: alpha (the registry connection dropped").And.Contain($"{lostFor:c} ago), beta ("), context);
                }
            }
        }
        finally
        {
            await host.StopAsync(cancellationToken);
            if (registry is not null)
            {
                await registry.DisposeAsync();
            }
        }
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task ARegistryThatRefusesTheRegistrationSentAgainMakesTheReceiverUnhealthyWithItsReason(CancellationToken cancellationToken)
    {
        string router = Local.RefusingEndpoint();
        using var context = new ZlinkContext();
        using IHost host = ReceiverHost(
            null,
            null,
            ("BindEndpoint", "tcp://127.0.0.1:*"),
            ("RegistryEndpoint", router),
            ("Services:0:Name", "echo"),
            ("HeartbeatInterval", "00:00:00.200"),
            ("DrainDelay", "00:00:00"),
            ("Health:StartupGracePeriod", "00:00:00"));
        ZlinkReceiver receiver = host.Services.GetRequiredService<ZlinkReceiver>();
        using (ZlinkSocket accepting = FakeRegistry(context, router))
        {
            await host.StartAsync(cancellationToken);
            await AnswerRegisterAsync(accepting, 0, "", cancellationToken);
            await Local.Until(() => receiver.GetRegistrationState("echo") == RegistrationState.Registered, "the first registration acknowledged");
            await Local.Until(() => Hosts.CheckAsync(host, Check).Result.Status == HealthStatus.Healthy, "the acknowledgement seen by the check");
        }

        // The registry restarts (the fake closes; a new one on the same endpoint) and refuses the
        // REGISTER sent again: the registration is given up, and the check says why.
        await Local.Until(() => receiver.GetRegistrationState("echo") == RegistrationState.Reconnecting, "the loss seen by the receiver");
        using ZlinkSocket refusing = FakeRegistry(context, router);
        await AnswerRegisterAsync(refusing, 2, "endpoint not reachable", cancellationToken);
        await Local.Until(() => receiver.GetRegistrationState("echo") == RegistrationState.NotRegistered, "the refusal taken by the receiver");
        await Local.Until(() => Hosts.CheckAsync(host, Check).Result.Description!.Contains("(endpoint not reachable)", StringComparison.Ordinal), "the refusal's reason read");
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "registration given up: echo (the registry refused the registration: status 2 (endpoint not reachable))");

        await host.StopAsync(cancellationToken); // nothing left to unregister: the stop does not fail
        await Hosts.Expect(host, Check, HealthStatus.Unhealthy, "has stopped");
    }

    /// <summary>A registry's ROUTER that answers what the test tells it to.</summary>
    private static ZlinkSocket FakeRegistry(ZlinkContext context, string endpoint)
    {
        ZlinkSocket router = context.CreateSocket(ZlinkSocketType.Router);
        router.Linger = 0;
        router.Bind(endpoint);
        return router;
    }

    /// <summary>Answers the next REGISTER (HEARTBEATs before it are read and left unanswered, as a registry does).</summary>
    private static async Task AnswerRegisterAsync(ZlinkSocket registry, byte status, string error, CancellationToken cancellationToken)
    {
        while (true)
        {
            List<byte[]> frames = await registry.ReceiveMultipartAsync(cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(20), cancellationToken);
            RegistryRequest request = ServiceProtocol.DecodeRegistryRequest(frames[1..]);
            if (request.MessageId == ServiceProtocol.Register)
            {
                registry.SendMultipart([frames[0], .. ServiceProtocol.EncodeRegisterAck(status, request.Endpoint, error)]);
                return;
            }
        }
    }

    private static IHost ReceiverHost(TimeProvider? clock, Action<IServiceCollection>? after, params (string Key, string Value)[] settings)
        => Hosts.Build("NetZlink:Receiver", settings, clock, (services, section) =>
        {
            services.AddNetZlinkReceiver(section);
            after?.Invoke(services);
        });

    /// <summary>The application's side: answers every request with its first part, until the host stops it.</summary>
    private sealed class EchoWorker(ZlinkReceiver receiver) : BackgroundService
    {
        protected override async Task ExecuteAsync(CancellationToken stoppingToken)
        {
            try
            {
                await foreach (ServiceMessage request in receiver.Requests.ReadAllAsync(stoppingToken))
                {
                    using (request)
                    {
                        receiver.Send(request.Peer, request.GetPartMemory(0).Span);
                    }
                }
            }
            catch (OperationCanceledException)
            {
            }
        }
    }
}
