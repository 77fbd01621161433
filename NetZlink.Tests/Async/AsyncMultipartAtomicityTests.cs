// Multipart atomicity: several DEALERs send multipart messages with SendMultipartAsync at once
// (each from its own task, with tiny high-water marks so sends wait), and the ROUTER takes them
// with ReceiveMultipartAsync: every message arrives whole, its frames never mixed with another's,
// and each DEALER's messages in order. Sizes and frame counts are random (NETZLINK_FUZZ_SEED).
namespace NetZlink.Tests.Async;

[CancelAfter(120_000)]
public sealed class AsyncMultipartAtomicityTests : ContextTest
{
    private const int Dealers = 6;

    [TestCase("inproc"), TestCase("tcp")]
    public async Task MultipartMessages_FromSeveralDealersAtOnce_ArriveWholeAndInOrder(string transport)
    {
        Random random = Fuzz.Random(out int seed);
        int perDealer = Fuzz.Iterations(300);
        using ZlinkSocket router = Context.CreateSocket(ZlinkSocketType.Router);
        router.ReceiveHighWaterMark = 2;
        string endpoint = Endpoints.BindFresh(router, transport);
        var dealers = new List<ZlinkSocket>();
        try
        {
            var plans = new List<int[]>();
            for (int d = 0; d < Dealers; d++)
            {
                ZlinkSocket dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
                dealer.SendHighWaterMark = 2;
                dealer.RoutingId = new RoutingId([(byte)'d', (byte)d]);
                dealer.Connect(endpoint);
                dealers.Add(dealer);
                plans.Add(Enumerable.Range(0, perDealer).Select(_ => random.Next(1, 6)).ToArray());
            }

            // Frame f of message m of dealer d: [d][m][f][count] then filler bytes.
            var senders = dealers.Select((dealer, d) => Task.Run(async () =>
            {
                for (int m = 0; m < perDealer; m++)
                {
                    int count = plans[d][m];
                    var parts = new ReadOnlyMemory<byte>[count];
                    for (int f = 0; f < count; f++)
                    {
                        byte[] frame = new byte[4 + ((m + f) % 40)];
                        frame[0] = (byte)d;
                        BitConverter.TryWriteBytes(frame.AsSpan(1, 2), (ushort)m);
                        frame[3] = (byte)f;
                        parts[f] = frame;
                    }

                    await dealer.SendMultipartAsync(parts).ConfigureAwait(false);
                }
            })).ToArray();

            int[] next = new int[Dealers];
            var problems = new List<string>();
            for (int i = 0; i < Dealers * perDealer; i++)
            {
                List<byte[]> message = await AsyncTestSupport.Within(router.ReceiveMultipartAsync(), $"seed {seed}: message {i}");
                int d = message[0][1];
                int m = BitConverter.ToUInt16(message[1], 1);
                if (m != next[d] || message.Count - 1 != plans[d][m])
                {
                    problems.Add($"dealer {d}: expected message {next[d]} of {plans[d][next[d]]} frames, got message {m} with {message.Count - 1}");
                }

                for (int f = 1; f < message.Count; f++)
                {
                    if (message[f][0] != d || BitConverter.ToUInt16(message[f], 1) != m || message[f][3] != f - 1)
                    {
                        problems.Add($"dealer {d} message {m}: frame {f - 1} belongs elsewhere");
                    }
                }

                next[d] = m + 1;
            }

            await AsyncTestSupport.Within(Task.WhenAll(senders), $"seed {seed}: the senders");
            Assert.That(problems, Is.Empty, $"seed {seed}: messages that arrived mixed, cut or out of order");
        }
        finally
        {
            dealers.ForEach(d => d.Dispose());
        }
    }
}
