// The hosting package in a real host: configuration from an in-memory provider, engines that start
// and stop with the host, bad settings refused at start with one line each, keyed instances.
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using NetZlink.Engine;
using NetZlink.Extensions.Hosting;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class HostingTests
{
    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task AHostStartsItsEnginesFromConfigurationAndStopsThemWithIt(CancellationToken cancellationToken)
    {
        using ServerEngine backend = Local.EchoServer();
        var logs = new CapturingLoggerProvider();
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["NetZlink:Backend:Endpoints:0"] = backend.BoundEndpoints[0],
            ["NetZlink:Backend:ConnectionCount"] = "2",
            ["NetZlink:Backend:ShardCount"] = "1",
            ["NetZlink:Backend:ConnectRetries"] = "5",
            ["NetZlink:Front:Endpoints:0"] = "tcp://127.0.0.1:*",
        });
        builder.Logging.AddProvider(logs).SetMinimumLevel(LogLevel.Trace);
        builder.Services.AddNetZlinkClientEngine(builder.Configuration.GetSection("NetZlink:Backend"));
        builder.Services.AddNetZlinkServerEngine(builder.Configuration.GetSection("NetZlink:Front"));
        using IHost host = builder.Build();

        var client = host.Services.GetRequiredService<NetZlinkEngineService<ClientEngine>>();
        var server = host.Services.GetRequiredService<NetZlinkEngineService<ServerEngine>>();
        Assert.That(() => client.Channel, Throws.InvalidOperationException.With.Message.Contains("has not been started"));
        await host.StartAsync(cancellationToken);

        Assert.Multiple(() =>
        {
            Assert.That(host.Services.GetRequiredService<ClientEngine>(), Is.SameAs(client.Engine));
            Assert.That(client.Engine.ConnectionCount, Is.EqualTo(2), "ConnectionCount from configuration");
            Assert.That(client.Engine.ShardCount, Is.EqualTo(1), "ShardCount from configuration");
            Assert.That(server.Engine.IsRunning, Is.True);
            Assert.That(server.Engine.BoundEndpoints[0], Does.Match(@"^tcp://127\.0\.0\.1:\d+$"));
        });

        // The channel carries the engine's traffic: both connections come up and echo.
        int echoes = 0, connected = 0;
        await foreach (EngineEvent e in client.Channel.Reader.ReadAllAsync(cancellationToken))
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Connected)
                {
                    connected++;
                    Assert.That(await client.Channel.SendAsync(e.Connection, Local.Packet("ping"), cancellationToken), Is.True);
                }
                else if (e.Kind == EngineEventKind.Packet)
                {
                    Assert.That(e.Packet[4..].ToArray(), Is.EqualTo("ping"u8.ToArray()));
                    if (++echoes == 2)
                    {
                        break;
                    }
                }
                else
                {
                    Assert.Fail($"unexpected {e.Kind}");
                }
            }
        }

        await host.StopAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(connected, Is.EqualTo(2));
            Assert.That(client.Engine.Stopped.IsCompletedSuccessfully, Is.True, "the client engine stopped with the host");
            Assert.That(server.Engine.Stopped.IsCompletedSuccessfully, Is.True, "the server engine stopped with the host");
            Assert.That(client.Engine.IsRunning, Is.False);
            // The host's logger factory reached the engines: each logged its start and its stop.
            Assert.That(logs.WithId(1000).Select(e => e.Message), Has.Some.StartsWith("ClientEngine started").And.Some.StartsWith("ServerEngine started"), logs.Dump());
            Assert.That(logs.WithId(1001).Count(), Is.EqualTo(2), logs.Dump());
            Assert.That(logs.Entries.Where(e => e.EventId.Id is >= 1000 and < 1100).Select(e => e.Category), Is.All.EqualTo("NetZlink.Engine"));
        });
    }

    [Test]
    public async Task BadSettingsFailTheStartWithOneLinePerSettingNamingItsKey()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["NetZlink:Backend:Endpoints:0"] = "tcp://127.0.0.1:5555",
            ["NetZlink:Backend:Endpoints:1"] = "udp://127.0.0.1:5555",
            ["NetZlink:Backend:ConnectionCount"] = "0",
            ["NetZlink:Backend:ConnectRetries"] = "-1",
            ["NetZlink:Backend:ConnectTimeout"] = "00:00:00",
            ["NetZlink:Backend:MessageTraceSampleRatio"] = "1.5",
            ["NetZlink:Backend:Health:StartupGracePeriod"] = "-00:00:01",
            ["NetZlink:Backend:ConectTimeout"] = "00:00:05",
            ["NetZlink:Backend:Health:GracePeriod"] = "00:00:05",
            ["NetZlink:Front:MaxConnections"] = "0",
            ["NetZlink:Backend:ReceiveBudgetPerConnection"] = "0",
            ["NetZlink:Front:ReceiveBudgetPerConnection"] = "1024",
            ["NetZlink:Front:ReceiveBudgetPerShard"] = "5",
            ["NetZlink:Backend:Reconnect:Jitter"] = "2",
            ["NetZlink:Backend:Reconnect:MaxAtempts"] = "3",
            ["NetZlink:Backend:IdleTimeout"] = "-00:00:01",
        });
        builder.Services.AddNetZlinkClientEngine(builder.Configuration.GetSection("NetZlink:Backend"));
        builder.Services.AddKeyedNetZlinkServerEngine("front", builder.Configuration.GetSection("NetZlink:Front"));
        using IHost host = builder.Build();

        OptionsValidationException? refused = null;
        try
        {
            await host.StartAsync();
        }
        catch (OptionsValidationException e)
        {
            refused = e;
        }
        catch (AggregateException e) when (e.InnerExceptions.All(i => i is OptionsValidationException))
        {
            refused = new OptionsValidationException("all", typeof(object), e.InnerExceptions.SelectMany(i => ((OptionsValidationException)i).Failures));
        }

        Assert.That(refused, Is.Not.Null, "the host must not start with these settings");
        string[] expected =
        [
            "NetZlink:Backend:ConnectionCount must be at least 1 (is 0)",
            "NetZlink:Backend:Endpoints:1 is 'udp://127.0.0.1:5555': an engine endpoint is tcp://host:port, tls://host:port, ws://host:port[/path] or wss://host:port[/path]",
            "NetZlink:Backend:MessageTraceSampleRatio must be from 0 to 1 (is 1.5)",
            "NetZlink:Backend:ConnectTimeout must be positive (is 00:00:00)",
            "NetZlink:Backend:ConnectRetries must be at least 0 (is -1)",
            "NetZlink:Backend:Health:StartupGracePeriod must not be negative (is -00:00:01)",
            "NetZlink:Backend:ConectTimeout is not a setting of a NetZlink client engine (misspelt? docs/hosting.md lists them)",
            "NetZlink:Backend:Health:GracePeriod is not a setting of a NetZlink client engine (misspelt? docs/hosting.md lists them)",
            "NetZlink:Front:Endpoints is empty: name at least one endpoint to bind (tcp://127.0.0.1:5555, tcp://*:*, tls://, ws://, wss://)",
            "NetZlink:Front:MaxConnections must be from 1 to 16777216 (is 0)",
            "NetZlink:Backend:ReceiveBudgetPerConnection must be at least 5 (the framer's header size and one byte) (is 0)",
            "NetZlink:Front:ReceiveBudgetPerShard must be at least 1024 (ReceiveBudgetPerConnection: a shard holds at least one connection's bytes) (is 5)",
            "NetZlink:Backend:Reconnect:Jitter must be from 0 to 1 (is 2)",
            "NetZlink:Backend:Reconnect:MaxAtempts is not a setting of a NetZlink client engine (misspelt? docs/hosting.md lists them)",
            "NetZlink:Backend:IdleTimeout must not be negative (00:00:00 turns it off) (is -00:00:01)",
        ];
        Assert.That(refused!.Failures, Is.EquivalentTo(expected), string.Join("\n", refused.Failures));
        Assert.That(host.Services.GetRequiredService<NetZlinkEngineService<ClientEngine>>().StartedAt, Is.Null, "no engine started");
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(60_000)]
    public async Task AHostStopDrainsItsEngine_EveryAcceptedFrameReachesThePeer(CancellationToken cancellationToken)
    {
        const int Frames = 400;
        var peer = new CountingHandler();
        using var backend = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        backend.Start(_ => peer);
        var logs = new CapturingLoggerProvider();
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Logging.AddProvider(logs).SetMinimumLevel(LogLevel.Trace);
        builder.Services.AddNetZlinkClientEngine(o => o.Engine.Endpoints = [backend.BoundEndpoints[0]]);
        using IHost host = builder.Build();
        var client = host.Services.GetRequiredService<NetZlinkEngineService<ClientEngine>>();
        await host.StartAsync(cancellationToken);

        byte[] frame = Local.Packet(new string('x', 4000));
        await foreach (EngineEvent e in client.Channel.Reader.ReadAllAsync(cancellationToken))
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Connected)
                {
                    for (int i = 0; i < Frames; i++)
                    {
                        Assert.That(await client.Channel.SendAsync(e.Connection, frame, cancellationToken), Is.True);
                    }

                    break;
                }
            }
        }

        // At once, with frames still queued: the host's stop drains them out before the engine stops.
        await host.StopAsync(cancellationToken);
        SendQueueCounters posts = client.Engine.ReadSendQueueCounters();
        Assert.Multiple(() =>
        {
            Assert.That(posts.Accepted, Is.EqualTo(Frames));
            Assert.That(posts.Sent, Is.EqualTo(Frames), "every accepted frame went out");
            Assert.That(posts.DroppedStopped + posts.DroppedDrainDeadline + posts.DroppedClosed, Is.Zero);
            Assert.That(logs.WithId(1019).Count(), Is.EqualTo(1), logs.Dump());
        });
        await Local.Until(() => Volatile.Read(ref peer.Packets) == Frames, "every frame at the peer");
    }

    private sealed class CountingHandler : QuietHandler
    {
        public int Packets;

        public override void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => Interlocked.Increment(ref Packets);
    }

    [Test]
    public async Task AClientAndAServerUnderOneKeyGetHealthChecksOfTheirOwn()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Services.AddNetZlinkServerEngine(o => o.Engine.Endpoints = ["tcp://127.0.0.1:*"]);
        builder.Services.AddNetZlinkClientEngine(o => o.Engine.Endpoints = ["tcp://127.0.0.1:1"]);
        builder.Services.AddKeyedNetZlinkServerEngine("a", o => o.Engine.Endpoints = ["tcp://127.0.0.1:*"]);
        builder.Services.AddKeyedNetZlinkClientEngine("a", o => o.Engine.Endpoints = ["tcp://127.0.0.1:1"]);
        builder.Services.AddKeyedNetZlinkServerEngine("b", o => o.Engine.Endpoints = ["tcp://127.0.0.1:*"]);
        builder.Services.AddHealthChecks().AddNetZlinkHealthChecks();
        using IHost host = builder.Build();

        // Duplicate names made resolving the health check service throw (ArgumentException).
        HealthReport report = await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();
        Assert.That(
            report.Entries.Keys,
            Is.EquivalentTo(new[] { "netzlink:server", "netzlink:client", "netzlink:a:server", "netzlink:a:client", "netzlink:b" }));
    }

    [Test]
    public void TheSectionHoldsTheEngineSettingsBesideTheHostingOnes()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Backend:Endpoints:0"] = "tls://backend.example:7000",
            ["Backend:Endpoints:1"] = "ws://backend.example:7001/feed",
            ["Backend:ConnectionCount"] = "12",
            ["Backend:ConnectTimeout"] = "00:00:02.500",
            ["Backend:HighWaterMark"] = "77",
            ["Backend:MessageTraceSampleRatio"] = "0.25",
            ["Backend:Tls:CaFile"] = "/etc/ssl/backend-ca.pem",
            ["Backend:Tls:Hostname"] = "backend.example",
            ["Backend:Channel:ReceiveCapacityPerShard"] = "128",
            ["Backend:Health:MinimumConnections"] = "3",
        });
        builder.Services.AddNetZlinkClientEngine(builder.Configuration.GetSection("Backend"), o => o.Engine.ShardCount = 2);
        using IHost host = builder.Build();
        NetZlinkClientEngineOptions options = host.Services.GetRequiredService<IOptionsMonitor<NetZlinkClientEngineOptions>>().Get(Options.DefaultName);
        Assert.Multiple(() =>
        {
            Assert.That(options.Engine.Endpoints, Is.EqualTo(new[] { "tls://backend.example:7000", "ws://backend.example:7001/feed" }));
            Assert.That(options.ConnectionCount, Is.EqualTo(12));
            Assert.That(options.Engine.ConnectTimeout, Is.EqualTo(TimeSpan.FromMilliseconds(2500)));
            Assert.That(options.Engine.HighWaterMark, Is.EqualTo(77));
            Assert.That(options.Engine.MessageTraceSampleRatio, Is.EqualTo(0.25));
            Assert.That(options.Engine.Tls?.CaFile, Is.EqualTo("/etc/ssl/backend-ca.pem"));
            Assert.That(options.Engine.Tls?.Hostname, Is.EqualTo("backend.example"));
            Assert.That(options.Channel.ReceiveCapacityPerShard, Is.EqualTo(128));
            Assert.That(options.Health.MinimumConnections, Is.EqualTo(3));
            Assert.That(options.Engine.ShardCount, Is.EqualTo(2), "the configure action runs after the binding");
            Assert.That(options.Engine.ConnectRetries, Is.EqualTo(new EngineOptions().ConnectRetries), "what the section leaves out keeps its default");
        });
    }

    [Test]
    public void KeyedEnginesAreDistinctInstancesWithTheirOwnOptions()
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddKeyedNetZlinkClientEngine("orders", o =>
        {
            o.ConnectionCount = 1;
            o.Engine.Endpoints = ["tcp://127.0.0.1:5001"];
        });
        services.AddKeyedNetZlinkClientEngine("prices", o =>
        {
            o.ConnectionCount = 3;
            o.Engine.Endpoints = ["tcp://127.0.0.1:5002"];
        });
        services.AddSingleton<TwoEngines>();
        services.AddNetZlinkContext().AddNetZlinkContext(); // the second call keeps the first context
        Assert.That(
            () => services.AddKeyedNetZlinkClientEngine("orders", o => o.Engine.Endpoints = ["tcp://127.0.0.1:5003"]),
            Throws.InvalidOperationException.With.Message.Contains("'orders' is registered already"));

        using ServiceProvider provider = services.BuildServiceProvider();
        TwoEngines both = provider.GetRequiredService<TwoEngines>();
        Assert.Multiple(() =>
        {
            Assert.That(both.Orders, Is.Not.SameAs(both.Prices));
            Assert.That(both.Orders.ConnectionCount, Is.EqualTo(1));
            Assert.That(both.Prices.ConnectionCount, Is.EqualTo(3));
            Assert.That(provider.GetRequiredKeyedService<ClientEngine>("orders"), Is.SameAs(both.Orders), "one engine per key");
            Assert.That(provider.GetRequiredKeyedService<NetZlinkEngineService<ClientEngine>>("prices").Name, Is.EqualTo("prices"));
            Assert.That(provider.GetServices<IHostedService>().OfType<NetZlinkEngineService<ClientEngine>>().Count(), Is.EqualTo(2), "each engine is a hosted service");
            Assert.That(provider.GetServices<IHostedService>().Count(s => s is HostShutdown), Is.EqualTo(1), "and the shared context's bounded disposal, once");
            Assert.That(provider.GetService<ClientEngine>(), Is.Null, "no engine without a key was registered");
            Assert.That(services.Count(d => d.ServiceType == typeof(ZlinkContext)), Is.EqualTo(1));
            ZlinkContext context = provider.GetRequiredService<ZlinkContext>();
            Assert.That(provider.GetRequiredService<ZlinkContext>(), Is.SameAs(context), "one context");
        });
    }

    [Test]
    [CancelAfter(30_000)]
    public async Task AnEngineThatOutlivesTheShutdownTimeoutIsLoggedAndLeftToFinish(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        var handler = new BlockingHandler();
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Logging.AddProvider(logs).SetMinimumLevel(LogLevel.Trace);
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromMilliseconds(300));
        builder.Services.AddNetZlinkServerEngine(o => o.Engine.Endpoints = ["tcp://127.0.0.1:*"]).UseHandler((_, _) => handler);
        using IHost host = builder.Build();
        await host.StartAsync(cancellationToken);
        var server = host.Services.GetRequiredService<ServerEngine>();

        handler.Block = true;
        server.RequestPass(); // the shard now sits in OnPass until released
        Assert.That(handler.Blocked.Wait(TimeSpan.FromSeconds(10), cancellationToken), Is.True, "the shard did not block");
        var stopping = System.Diagnostics.Stopwatch.StartNew();
        await host.StopAsync(CancellationToken.None);
        TimeSpan took = stopping.Elapsed;
        Assert.Multiple(() =>
        {
            Assert.That(took, Is.LessThan(TimeSpan.FromSeconds(5)), "the host waited past its shutdown timeout");
            Assert.That(logs.WithId(1100).Single().Message, Is.EqualTo("NetZlink engine 'ServerEngine' did not stop within the host's shutdown timeout; its shards finish on their own and the container disposes it"));
            Assert.That(server.Stopped.IsCompleted, Is.False, "the shard is still in its callback");
        });

        handler.Release.Set();
        await server.Stopped.WaitAsync(TimeSpan.FromSeconds(10), cancellationToken);
    }

    private sealed class BlockingHandler : QuietHandler
    {
        public volatile bool Block;

        public ManualResetEventSlim Blocked { get; } = new();

        public ManualResetEventSlim Release { get; } = new();

        public override void OnPass(EngineShard shard)
        {
            if (Block)
            {
                Blocked.Set();
                Release.Wait();
            }
        }
    }

    private sealed class TwoEngines([FromKeyedServices("orders")] ClientEngine orders, [FromKeyedServices("prices")] ClientEngine prices)
    {
        public ClientEngine Orders { get; } = orders;

        public ClientEngine Prices { get; } = prices;
    }
}
