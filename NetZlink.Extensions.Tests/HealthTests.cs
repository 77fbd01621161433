// The health check of a hosted engine against real engines on loopback: Healthy, Degraded and
// Unhealthy as connections come and go, the startup grace period, failures counted once, a fault.
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using NetZlink.Engine;
using NetZlink.Extensions.Hosting;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class HealthTests
{
    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task AClientIsHealthyWithEveryConnectionDegradedWithSomeAndUnhealthyWithNone(CancellationToken cancellationToken)
    {
        ServerEngine first = Local.EchoServer();
        ServerEngine second = Local.EchoServer();
        try
        {
            using IHost host = ClientHost(
                ("Endpoints:0", first.BoundEndpoints[0]),
                ("Endpoints:1", second.BoundEndpoints[0]),
                ("ConnectionCount", "2"),
                ("Health:StartupGracePeriod", "00:00:00.2"));
            var client = host.Services.GetRequiredService<NetZlinkEngineService<ClientEngine>>();
            await Expect(host, HealthStatus.Unhealthy, "has not been started");

            await host.StartAsync(cancellationToken);
            await client.Engine.ConnectsResolved.WaitAsync(cancellationToken);
            await Task.Delay(250, cancellationToken); // past the grace period
            await Expect(host, HealthStatus.Healthy, "2 live connections");

            await second.DisposeAsync(); // connection 1 ends (Remote)
            await Local.Until(() => Live(client.Engine) == 1, "connection 1 to end");
            await Expect(host, HealthStatus.Degraded, "1 of 2 connections are up");

            await first.DisposeAsync();
            await Local.Until(() => Live(client.Engine) == 0, "connection 0 to end");
            await Expect(host, HealthStatus.Unhealthy, "0 live connections, at least 1 expected (Health:MinimumConnections)");

            await host.StopAsync(cancellationToken);
            await Expect(host, HealthStatus.Unhealthy, "has stopped");
        }
        finally
        {
            await first.DisposeAsync();
            await second.DisposeAsync();
        }
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task NoConnectionIsHealthyWithinTheStartupGracePeriodAndUnhealthyAfterIt(CancellationToken cancellationToken)
    {
        // Attempts keep failing and are retried for longer than the test: no connection, no final failure.
        using IHost host = ClientHost(
            ("Endpoints:0", Local.RefusingEndpoint()),
            ("ConnectRetries", "100000"),
            ("ConnectRetryDelay", "00:00:00.02"),
            ("Health:StartupGracePeriod", "00:00:01"));
        var started = System.Diagnostics.Stopwatch.StartNew();
        await host.StartAsync(cancellationToken);
        HealthReportEntry during = await Check(host);
        bool checkedInTime = started.Elapsed < TimeSpan.FromSeconds(0.9);
        TimeSpan rest = TimeSpan.FromSeconds(1.1) - started.Elapsed;
        await Task.Delay(rest > TimeSpan.Zero ? rest : TimeSpan.Zero, cancellationToken);
        HealthReportEntry after = await Check(host);
        await host.StopAsync(cancellationToken);

        if (checkedInTime)
        {
            Assert.That(during.Status, Is.EqualTo(HealthStatus.Healthy), during.Description);
            Assert.That(during.Description, Does.Contain("0 live connections (starting: within the startup grace period)"));
        }

        Assert.That(after.Status, Is.EqualTo(HealthStatus.Unhealthy), after.Description);
        Assert.That(after.Description, Does.Contain("0 live connections, at least 1 expected"));
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task AConnectFailureDegradesTheCheckThatSeesItAndOnlyThatOne(CancellationToken cancellationToken)
    {
        await using ServerEngine backend = Local.EchoServer();
        using IHost host = ClientHost(
            ("Endpoints:0", backend.BoundEndpoints[0]),
            ("Endpoints:1", Local.RefusingEndpoint()),
            ("ConnectionCount", "2"),
            ("ConnectRetries", "0"),
            ("Health:StartupGracePeriod", "00:01:00"));
        await host.StartAsync(cancellationToken);
        await host.Services.GetRequiredService<ClientEngine>().ConnectsResolved.WaitAsync(cancellationToken);

        await Expect(host, HealthStatus.Degraded, "1 connections failed to connect since the previous check");
        // Seen once: the next check is back to Healthy, still within the grace period for the missing one.
        await Expect(host, HealthStatus.Healthy, "1 live connections (starting: within the startup grace period)");
        await host.StopAsync(cancellationToken);
    }

    [Test]
    [CancelAfter(30_000)]
    public async Task AServerWithoutClientsIsHealthyAndAFaultedOneUnhealthy(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Logging.AddProvider(logs).SetMinimumLevel(LogLevel.Trace);
        builder.Services.AddKeyedNetZlinkServerEngine("front", o =>
            {
                o.Engine.Endpoints = ["tcp://127.0.0.1:*"];
                o.Health.StartupGracePeriod = TimeSpan.Zero;
            })
            .UseHandler((_, _) => new ThrowingHandler());
        builder.Services.AddHealthChecks().AddNetZlinkHealthChecks();
        using IHost host = builder.Build();
        await host.StartAsync(cancellationToken);
        var server = host.Services.GetRequiredKeyedService<ServerEngine>("front");
        await Expect(host, HealthStatus.Healthy, "0 live connections", "netzlink:front");

        // The handler throws when a client connects: the engine faults.
        using var peer = new TcpClient();
        await peer.ConnectAsync(Local.At(server.BoundEndpoints[0]), cancellationToken);
        await server.Stopped.WaitAsync(TimeSpan.FromSeconds(10), cancellationToken);
        await Expect(host, HealthStatus.Unhealthy, "faulted: Engine shard 0 failed: the handler refuses", "netzlink:front");
        Assert.That(logs.WithId(1004).Single().Message, Does.Contain("front: a connection handler threw on shard 0 (InvalidOperationException)"), logs.Dump());
        Assert.That(logs.WithId(1004).Single().Exception?.Message, Is.EqualTo("the handler refuses"));
        await host.StopAsync(cancellationToken);
    }

    private static long Live(ClientEngine engine)
    {
        EngineCounters c = engine.ReadCounters();
        return c.Connected - c.Disconnects;
    }

    private static IHost ClientHost(params (string Key, string Value)[] settings)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings.Select(s => new KeyValuePair<string, string?>("Backend:" + s.Key, s.Value)));
        builder.Services.AddNetZlinkClientEngine(builder.Configuration.GetSection("Backend"));
        builder.Services.AddHealthChecks().AddNetZlinkHealthChecks();
        return builder.Build();
    }

    private static async Task<HealthReportEntry> Check(IHost host, string name = "netzlink")
    {
        HealthReport report = await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();
        return report.Entries[name];
    }

    private static async Task Expect(IHost host, HealthStatus status, string description, string name = "netzlink")
    {
        HealthReportEntry entry = await Check(host, name);
        Assert.Multiple(() =>
        {
            Assert.That(entry.Status, Is.EqualTo(status), entry.Description);
            Assert.That(entry.Description, Does.Contain(description));
        });
    }

    private sealed class ThrowingHandler : QuietHandler
    {
        public override void OnConnected(EngineShard shard, Connection connection) => throw new InvalidOperationException("the handler refuses");
    }
}
