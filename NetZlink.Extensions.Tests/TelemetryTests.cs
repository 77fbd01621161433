// The engines' spans and metrics through OpenTelemetry (AddNetZlinkInstrumentation and the
// in-memory exporter): connection spans with the messaging attributes, message spans absent by
// default and present at ratio 1, metrics per engine name.
using System.Diagnostics;
using NetZlink.Engine;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class TelemetryTests
{
    [RequiresStreamClient]
    [TestCase(0.0)]
    [TestCase(1.0)]
    [CancelAfter(30_000)]
    public async Task ConnectionSpansAlwaysAndMessageSpansOnlyWhenSampled(double ratio, CancellationToken cancellationToken)
    {
        var spans = new List<Activity>();
        string name = $"spans-{ratio}-{Guid.NewGuid():N}";
        const int Packets = 5;
        using (TracerProvider tracing = Sdk.CreateTracerProviderBuilder().AddNetZlinkInstrumentation().AddInMemoryExporter(spans).Build())
        {
            await using ServerEngine server = Local.EchoServer(name + "-server");
            string endpoint = server.BoundEndpoints[0];
            await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [endpoint], Name = name, MessageTraceSampleRatio = ratio });
            EngineChannel channel = client.StartChannel();
            int echoes = 0;
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync(cancellationToken))
            {
                using (e)
                {
                    if (e.Kind == EngineEventKind.Connected)
                    {
                        for (int i = 0; i < Packets; i++)
                        {
                            Assert.That(await channel.SendAsync(e.Connection, Local.Packet($"m{i}"), cancellationToken), Is.True);
                        }
                    }
                    else if (e.Kind == EngineEventKind.Packet && ++echoes == Packets)
                    {
                        await client.StopAsync(cancellationToken);
                    }
                }
            }

            tracing.ForceFlush();
            Activity[] mine = spans.Where(s => (string?)s.GetTagItem("netzlink.engine.name") == name).ToArray();
            (string host, int port) = Local.Split(endpoint);
            Activity connect = mine.Single(s => s.DisplayName == "connect " + endpoint);
            Assert.Multiple(() =>
            {
                Assert.That(connect.Source.Name, Is.EqualTo("NetZlink"));
                Assert.That(connect.Kind, Is.EqualTo(ActivityKind.Client));
                Assert.That(connect.Status, Is.EqualTo(ActivityStatusCode.Unset));
                Assert.That(connect.GetTagItem("messaging.system"), Is.EqualTo("zlink"));
                Assert.That(connect.GetTagItem("messaging.destination.name"), Is.EqualTo(endpoint));
                Assert.That(connect.GetTagItem("network.peer.address"), Is.EqualTo(host));
                Assert.That(connect.GetTagItem("network.peer.port"), Is.EqualTo(port));
                Assert.That(connect.GetTagItem("network.transport"), Is.EqualTo("tcp"));
                Assert.That(connect.GetTagItem("netzlink.connection.index"), Is.EqualTo(0));
                Activity disconnect = mine.Single(s => s.DisplayName == "disconnect " + endpoint);
                Assert.That(disconnect.GetTagItem("netzlink.disconnect.reason"), Is.EqualTo("EngineStopped"));
                Assert.That(spans.Where(s => (string?)s.GetTagItem("netzlink.engine.name") == name + "-server").Select(s => s.DisplayName), Has.Some.EqualTo("accept " + endpoint));
                Assert.That(spans.Single(s => s.DisplayName == "accept " + endpoint).Kind, Is.EqualTo(ActivityKind.Server));

                Activity[] sends = mine.Where(s => s.DisplayName == "send " + endpoint).ToArray();
                Activity[] receives = mine.Where(s => s.DisplayName == "receive " + endpoint).ToArray();
                if (ratio == 0)
                {
                    Assert.That(sends, Is.Empty, "no message span unless asked for");
                    Assert.That(receives, Is.Empty, "no message span unless asked for");
                }
                else
                {
                    Assert.That(sends, Has.Length.EqualTo(Packets), "ratio 1: a span per posted frame");
                    Assert.That(sends.Select(s => s.Kind), Is.All.EqualTo(ActivityKind.Producer));
                    Assert.That(sends.Select(s => s.GetTagItem("messaging.operation.type")), Is.All.EqualTo("send"));
                    Assert.That(sends.Select(s => s.GetTagItem("messaging.message.body.size")), Is.All.EqualTo(6));
                    // Echoes may arrive together as one run: one span per run, covering every byte.
                    Assert.That(receives, Is.Not.Empty);
                    Assert.That(receives.Sum(s => (int)s.GetTagItem("messaging.message.body.size")!), Is.EqualTo(Packets * 6));
                    Assert.That(receives.Select(s => s.Kind), Is.All.EqualTo(ActivityKind.Consumer));
                }
            });
        }
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task AFailedConnectAttemptEndsItsSpanWithTheReason(CancellationToken cancellationToken)
    {
        var spans = new List<Activity>();
        string name = $"refused-{Guid.NewGuid():N}";
        string refusing = Local.RefusingEndpoint();
        using TracerProvider tracing = Sdk.CreateTracerProviderBuilder().AddNetZlinkInstrumentation().AddInMemoryExporter(spans).Build();
        await using (var client = new ClientEngine(1, new EngineOptions { Endpoints = [refusing], ConnectRetries = 1, ConnectRetryDelay = TimeSpan.FromMilliseconds(10), Name = name }))
        {
            client.StartChannel();
            await client.ConnectsResolved.WaitAsync(cancellationToken);
        }

        tracing.ForceFlush();
        Activity[] attempts = spans.Where(s => (string?)s.GetTagItem("netzlink.engine.name") == name && s.DisplayName == "connect " + refusing).ToArray();
        Assert.That(attempts, Has.Length.EqualTo(2), "one span per attempt");
        Assert.Multiple(() =>
        {
            Assert.That(attempts.Select(a => a.Status), Is.All.EqualTo(ActivityStatusCode.Error));
            Assert.That(attempts.Select(a => a.StatusDescription), Is.All.EqualTo("ECONNREFUSED (errno 111)"));
            Assert.That(attempts.Select(a => a.GetTagItem("error.type")), Is.All.EqualTo("ECONNREFUSED"));
            Assert.That(attempts.Select(a => a.GetTagItem("netzlink.connect.attempt")), Is.EqualTo(new object[] { 1, 2 }));
            Assert.That(attempts.Select(a => a.Parent), Is.All.Null, "attempts are not each other's children");
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task MetricsAppearPerEngineName(CancellationToken cancellationToken)
    {
        var metrics = new List<Metric>();
        string name = $"metrics-{Guid.NewGuid():N}";
        using MeterProvider meters = Sdk.CreateMeterProviderBuilder().AddNetZlinkInstrumentation().AddInMemoryExporter(metrics).Build();
        await using ServerEngine server = Local.EchoServer();
        await using var client = new ClientEngine(2, new EngineOptions { Endpoints = [server.BoundEndpoints[0]], Name = name });
        client.StartChannel();
        await client.ConnectsResolved.WaitAsync(cancellationToken);
        meters.ForceFlush();

        Assert.That(metrics.Select(m => m.Name), Is.SupersetOf(new[] { "netzlink.engine.connections", "netzlink.engine.connect_failures", "netzlink.engine.packets_received", "netzlink.engine.bytes_sent" }));
        Metric connections = metrics.Last(m => m.Name == "netzlink.engine.connections");
        long? ours = null;
        foreach (MetricPoint point in connections.GetMetricPoints())
        {
            foreach (KeyValuePair<string, object?> tag in point.Tags)
            {
                if (tag.Key == "netzlink.engine.name" && (string?)tag.Value == name)
                {
                    ours = point.GetSumLong();
                }
            }
        }

        Assert.That(ours, Is.EqualTo(2), "the engine's two live connections, under its name");
    }
}
