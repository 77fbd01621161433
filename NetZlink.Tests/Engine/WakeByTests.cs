// EngineShard.WakeBy: a handler that sends on a clock gets a pass at its time from an idle shard,
// instead of waiting out the engine's idle sleep (250 ms) for socket activity that never comes.
namespace NetZlink.Tests.Engine;

[RequiresStreamClient]
public sealed class WakeByTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(15);
    [Test, CancelAfter(60_000)]
    public void AnIdleShard_PassesAtTheTimeItWasAskedFor()
    {
        using var server = new RawTcpServer();
        var handler = new PacingHandler(TimeSpan.FromMilliseconds(20), deadlines: 15);
        using var engine = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [server.Endpoint],
            ShardCount = 1,
            ConnectTimeout = TimeSpan.FromSeconds(5),
            ConnectRetries = 0,
        });
        engine.Start(_ => handler);
        using System.Net.Sockets.Socket peer = server.Accept(Patience);

        // The connection stays silent: only the requested wake-ups make passes.
        Wait.Until(() => handler.Lateness.Count == 15, "15 requested wake-ups", Patience);

        List<TimeSpan> lateness = handler.Lateness;
        TimeSpan median = lateness.Order().ElementAt(lateness.Count / 2);
        TestContext.Out.WriteLine($"lateness past the requested time: median {median.TotalMicroseconds:0} µs, max {lateness.Max().TotalMicroseconds:0} µs");
        // Without WakeBy each would come with the idle sleep's end, about 230 ms late.
        Assert.That(median, Is.LessThan(TimeSpan.FromMilliseconds(50)));
    }
}
