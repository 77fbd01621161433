// Arguments an engine refuses with a clear exception before anything runs or is sent: no endpoint
// list, and an empty frame (which on a STREAM socket would mean "close this connection").
namespace NetZlink.Tests.Engine;

public sealed class EngineArgumentTests : EngineFixture
{
    [Test, CancelAfter(30_000)]
    public void NullEndpoints_AreRefusedWithArgumentNullException()
    {
        var e = Assert.Throws<ArgumentNullException>(() => new ClientEngine(1, new EngineOptions { Endpoints = null! }));
        Assert.That(e!.Message, Does.Contain("EngineOptions.Endpoints is null"));
        Assert.Throws<ArgumentNullException>(() => new ServerEngine(new EngineOptions { Endpoints = null! }));
    }

    // The messages said "A frame of 1 bytes" and "ends with 1 byte(s)".
    [Test, CancelAfter(30_000)]
    public void AFrameThatIsNotWholePackets_IsDescribedInGoodEnglish()
    {
        using var engine = new ClientEngine(1, new EngineOptions { Endpoints = ["tcp://127.0.0.1:1"] });
        var one = Assert.Throws<ArgumentException>(() => engine.TrySend(default, [7]))!;
        Assert.That(one.Message, Does.StartWith("A frame of 1 byte is not whole packets").And.Contain("it ends with 1 byte after packet 0"));
        var two = Assert.Throws<ArgumentException>(() => engine.TrySend(default, [0, 0, 0, 1, 9, 0, 0]))!;
        Assert.That(two.Message, Does.StartWith("A frame of 7 bytes is not whole packets").And.Contain("it ends with 2 bytes after packet 1"));
        var body = Assert.Throws<ArgumentException>(() => engine.TrySend(default, [0, 0, 0, 1]))!;
        Assert.That(body.Message, Does.Contain("announces a body of 1 byte, and 0 follow"));
        Assert.That(EngineEvent.Disconnected(default, ConnectionEndReason.Remote, 1).ToString(), Does.EndWith("(Remote, 1 byte lost)"));
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public async Task AnEmptyFrame_IsRefused_AndTheConnectionStaysUsable()
    {
        await using var server = new ChannelEchoServer(endpoints: 1);
        await using var engine = new ClientEngine(1, new EngineOptions { Endpoints = [server.Engine.BoundEndpoints[0]] });
        EngineChannel channel = engine.StartChannel();
        using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await foreach (EngineEvent e in channel.Reader.ReadAllAsync(patience.Token))
        {
            using (e)
            {
                if (e.Kind == EngineEventKind.Connected)
                {
                    Connection connection = e.Connection;
                    var refused = Assert.Throws<ArgumentException>(() => channel.TrySend(connection, ReadOnlySpan<byte>.Empty));
                    Assert.That(refused!.Message, Does.Contain("An empty frame posts nothing"));
                    Assert.ThrowsAsync<ArgumentException>(async () => await engine.SendAsync(connection, ReadOnlyMemory<byte>.Empty));
                    Assert.That(channel.TrySend(connection, [0, 0, 0, 1, 42]), Is.True);
                }
                else if (e.Kind == EngineEventKind.Packet)
                {
                    Assert.That(e.Packet.ToArray(), Is.EqualTo(new byte[] { 0, 0, 0, 1, 42 }), "the connection still echoes after the refusal");
                    break;
                }
            }
        }
    }

    [Test, CancelAfter(30_000)]
    public async Task StartingTwice_NamesBothWaysToStart()
    {
        await using var engine = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        await using EngineChannel channel = engine.StartChannel();
        var again = Assert.Throws<InvalidOperationException>(() => engine.StartChannel());
        Assert.That(again!.Message, Does.Contain("StartChannel was already called"));
        Assert.Throws<InvalidOperationException>(() => engine.Start(_ => throw new InvalidOperationException("never called")));
    }
}
