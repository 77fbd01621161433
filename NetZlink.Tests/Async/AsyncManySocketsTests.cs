// 1,000 sockets waiting in ReceiveAsync at once, all driven by the reactor's one thread: every
// receive completes, each with exactly the payload sent to its socket. The sends go out in a
// random order with random payload sizes (NETZLINK_FUZZ_SEED replays them).
namespace NetZlink.Tests.Async;

[CancelAfter(120_000)]
public sealed class AsyncManySocketsTests : ContextTest
{
    private const int Pairs = 1000;

    [TestCase("inproc"), TestCase("tcp")]
    public async Task ThousandSockets_AwaitingReceive_AllCompleteWithTheirExactPayload(string transport)
    {
        Random random = Fuzz.Random(out int seed);
        Context.MaxSockets = 2 * Pairs + 16;
        var servers = new ZlinkSocket[Pairs];
        var clients = new ZlinkSocket[Pairs];
        try
        {
            for (int i = 0; i < Pairs; i++)
            {
                (servers[i], clients[i]) = AsyncTestSupport.Pair(Context, transport);
            }

            var buffers = new byte[Pairs][];
            var receives = new Task<int>[Pairs];
            for (int i = 0; i < Pairs; i++)
            {
                buffers[i] = new byte[512];
                receives[i] = servers[i].ReceiveAsync(buffers[i]).AsTask();
            }

            Assert.That(receives.Count(r => r.IsCompleted), Is.Zero, "nothing was sent yet, so every receive waits");

            var payloads = new byte[Pairs][];
            foreach (int i in Enumerable.Range(0, Pairs).OrderBy(_ => random.Next()))
            {
                payloads[i] = Fuzz.Bytes(random, random.Next(1, 512));
                await clients[i].SendAsync(payloads[i]);
            }

            Task all = Task.WhenAll(receives);
            await AsyncTestSupport.Within(all, $"seed {seed}: {Pairs} receives");
            int wrong = 0;
            for (int i = 0; i < Pairs; i++)
            {
                if (!buffers[i].AsSpan(0, receives[i].Result).SequenceEqual(payloads[i]))
                {
                    wrong++;
                }
            }

            Assert.That(wrong, Is.Zero, $"seed {seed}: receives that got another payload than their socket was sent");
        }
        finally
        {
            foreach (ZlinkSocket? socket in clients.Concat(servers))
            {
                socket?.Dispose();
            }
        }
    }
}
