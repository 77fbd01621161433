// An idle shard sleeps: once every connect is resolved and nothing arrives, the shard loop makes a
// pass only when its idle sleep (250 ms) ends or something wakes it. A loop that kept polling with
// a zero timeout (as it once did: established slots left in the connect wait list made every idle
// sleep a poll(0)) makes thousands of passes a second; counting passes shows it without timing.
namespace NetZlink.Tests.Engine;

[RequiresStreamClient]
public sealed class IdleShardTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(15);
    [Test, CancelAfter(60_000)]
    public void AShardWithEveryConnectionEstablishedAndSilentMakesFewPasses()
    {
        using var server = new RawTcpServer();
        var handler = new PassCounter();
        const int Connections = 20;
        using var engine = new ClientEngine(Connections, new EngineOptions
        {
            Endpoints = [server.Endpoint],
            ShardCount = 1,
            ConnectTimeout = TimeSpan.FromSeconds(1),
            ConnectRetries = 0,
        });
        engine.Start(_ => handler);
        var peers = new List<System.Net.Sockets.Socket>();
        try
        {
            for (int i = 0; i < Connections; i++)
            {
                peers.Add(server.Accept(Patience));
            }

            Wait.Until(() => Volatile.Read(ref handler.Connected) == Connections, "every connection established", Patience);
            // Past every connect's deadline (the spin came from established slots whose connect
            // deadlines had passed), then into the idle sleep.
            Thread.Sleep(1500);
            long before = Volatile.Read(ref handler.Passes);
            Thread.Sleep(2000);
            long passes = Volatile.Read(ref handler.Passes) - before;
            TestContext.Out.WriteLine($"passes in 2 s of silence: {passes}");

            // 250 ms idle sleeps: about 8. A spinning loop: tens of thousands. A slow machine only lowers it.
            Assert.That(passes, Is.LessThanOrEqualTo(40), "the idle shard keeps polling instead of sleeping");
        }
        finally
        {
            foreach (System.Net.Sockets.Socket peer in peers)
            {
                peer.Dispose();
            }
        }
    }

    private sealed class PassCounter : IConnectionHandler
    {
        public long Passes;
        public long Connected;

        public void OnConnected(EngineShard shard, Connection connection) => Interlocked.Increment(ref Connected);

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard) => Interlocked.Increment(ref Passes);
    }
}
