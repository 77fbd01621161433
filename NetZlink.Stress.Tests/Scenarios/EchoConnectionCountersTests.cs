// The one per-connection counters type every client stack keeps (EchoConnectionCounters), its
// echo accounting and the sum into LoadTotals, driven through random sends, echoes (good, bad,
// beyond what was outstanding) and closes against a model of what each must count. The seed is
// printed; NETZLINK_FUZZ_SEED replays it, NETZLINK_FUZZ_ITERATIONS runs longer.
using NetZlink.Tests;

namespace NetZlink.Stress.Tests.Scenarios;

[TestFixture]
public sealed class EchoConnectionCountersTests
{
    private const int Size = 32;

    [Test]
    public void RandomTrafficIsCountedAsTheModelCountsIt()
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(200);
        for (int round = 0; round < rounds; round++)
        {
            RunRound(random, $"seed {seed}, round {round}");
        }
    }

    [Test]
    public void EchoesBeyondWhatIsOutstandingAreGatingViolationsAndOutstandingStaysAtZero()
    {
        var c = new EchoConnectionCounters { Outstanding = 2 };

        int settledShared = c.SettleEchoes(5, shared: true);
        var d = new EchoConnectionCounters { Outstanding = 2 };
        int settledOwned = d.SettleEchoes(5, shared: false);

        Assert.Multiple(() =>
        {
            Assert.That(settledShared, Is.EqualTo(2));
            Assert.That(settledOwned, Is.EqualTo(2));
            Assert.That(c.Outstanding, Is.Zero);
            Assert.That(c.GatingViolations, Is.EqualTo(3));
            Assert.That(d.Outstanding, Is.Zero);
            Assert.That(d.GatingViolations, Is.EqualTo(3));
        });
    }

    [Test]
    public void ABadEchoCountsOnlyAsBad()
    {
        var plan = new LoadPlan(Size, inflight: 4, sendBatch: 4, latencySampleRate: 1, packetsPerConnection: long.MaxValue, verifyPayload: true);
        byte[] expected = plan.NewExpectedBody();
        byte[] packet = Packet(plan, expected, measured: true);
        packet[^1] ^= 0xFF;
        var c = new EchoConnectionCounters();

        EchoCount count = c.CountEcho(plan, expected, packet);
        EchoCount shortOne = c.CountEcho(plan, expected, packet.AsSpan(0, packet.Length - 1));

        Assert.Multiple(() =>
        {
            Assert.That(count, Is.EqualTo(EchoCount.Bad));
            Assert.That(shortOne, Is.EqualTo(EchoCount.Bad));
            Assert.That(c.BadEchoes, Is.EqualTo(2));
            Assert.That(c.ReceivedTotal, Is.Zero);
            Assert.That(c.ReceivedMeasured, Is.Zero);
        });
    }

    [Test]
    public void TheClosedModelNeverAsksForMoreThanTheCapOrTheBudget()
    {
        Random random = Fuzz.Random(out int seed);
        for (int round = 0; round < Fuzz.Iterations(200); round++)
        {
            int inflight = random.Next(1, 20);
            long budget = random.Next(0, 50);
            var plan = new LoadPlan(Size, inflight, sendBatch: 8, latencySampleRate: 1, packetsPerConnection: budget, verifyPayload: false);
            var c = new EchoConnectionCounters();
            for (int step = 0; step < 100; step++)
            {
                int perFrame = random.Next(1, 10);
                int want = c.Wants(plan, schedule: null, connectionIndex: 0, perFrame, out bool late);
                Assert.That(late, Is.False, $"seed {seed}");
                Assert.That(want, Is.InRange(0, perFrame), $"seed {seed}");
                if (want > 0)
                {
                    c.Outstanding += want;
                    c.CountSent(want, measured: random.Next(2) == 0);
                }

                Assert.That(c.Outstanding, Is.LessThanOrEqualTo(inflight), $"seed {seed}: the cap");
                Assert.That(c.Requested, Is.LessThanOrEqualTo(budget), $"seed {seed}: the budget");
                c.SettleEchoes(random.Next(0, (int)c.Outstanding + 1), shared: false);
            }
        }
    }

    private static void RunRound(Random random, string where)
    {
        var plan = new LoadPlan(Size, inflight: 16, sendBatch: 4, latencySampleRate: 1, packetsPerConnection: long.MaxValue, verifyPayload: true);
        byte[] expected = plan.NewExpectedBody();
        int connections = random.Next(1, 6);
        var counters = new EchoConnectionCounters[connections];
        var tallies = new ConnectionTallies();
        long sent = 0, sentMeasured = 0, received = 0, receivedMeasured = 0, gating = 0, bad = 0, lost = 0, peerClosed = 0, closes = 0;
        for (int step = 0; step < 60; step++)
        {
            int i = random.Next(connections);
            ref EchoConnectionCounters c = ref counters[i];
            switch (random.Next(5))
            {
                case 0 or 1:
                {
                    int packets = random.Next(1, 5);
                    bool measured = random.Next(2) == 0;
                    c.Outstanding += packets;
                    c.CountSent(packets, measured);
                    sent += packets;
                    sentMeasured += measured ? packets : 0;
                    break;
                }

                case 2 or 3:
                {
                    // Good echoes, sometimes more than are outstanding (a bookkeeping error to count).
                    int echoes = random.Next(0, (int)c.Outstanding + 2);
                    long outstanding = c.Outstanding;
                    for (int e = 0; e < echoes; e++)
                    {
                        bool measured = random.Next(2) == 0;
                        Assert.That(c.CountEcho(plan, expected, Packet(plan, expected, measured)), Is.EqualTo(measured ? EchoCount.Measured : EchoCount.Echo), where);
                        receivedMeasured += measured ? 1 : 0;
                    }

                    Assert.That(c.SettleEchoes(echoes, shared: random.Next(2) == 0), Is.EqualTo(Math.Min(echoes, outstanding)), where);
                    received += echoes;
                    gating += Math.Max(0, echoes - outstanding);
                    if (random.Next(4) == 0)
                    {
                        byte[] wrong = Packet(plan, expected, measured: false);
                        wrong[^1] ^= 1;
                        Assert.That(c.CountEcho(plan, expected, wrong), Is.EqualTo(EchoCount.Bad), where);
                        bad++;
                    }

                    break;
                }

                default:
                {
                    bool byPeer = random.Next(2) == 0;
                    bool stopping = random.Next(4) == 0;
                    long outstanding = Interlocked.Exchange(ref c.Outstanding, 0);
                    tallies.CountClose(outstanding, byPeer, stopping);
                    closes++;
                    if (!stopping)
                    {
                        lost += outstanding;
                        peerClosed += byPeer ? 1 : 0;
                    }
                    else
                    {
                        // Stopping: outstanding packets are neither lost nor in flight; the model drops them from sent.
                        sent -= outstanding;
                    }

                    break;
                }
            }

            var sum = new LoadTotalsSum();
            sum.Add(tallies);
            for (int k = 0; k < connections; k++)
            {
                sum.Add(ref counters[k]);
            }

            LoadTotals t = sum.ToTotals();
            Assert.Multiple(() =>
            {
                Assert.That(t.SentMeasured, Is.EqualTo(sentMeasured), where);
                Assert.That(t.ReceivedTotal, Is.EqualTo(received), where);
                Assert.That(t.ReceivedMeasured, Is.EqualTo(receivedMeasured), where);
                Assert.That(t.GatingViolations, Is.EqualTo(gating), where);
                Assert.That(t.BadEchoes, Is.EqualTo(bad), where);
                Assert.That(t.Lost, Is.EqualTo(lost), where);
                Assert.That(t.PeerClosed, Is.EqualTo(peerClosed), where);
                Assert.That(t.Disconnected, Is.EqualTo(closes), where);
                Assert.That(t.InFlight, Is.GreaterThanOrEqualTo(0), where);
                // Every packet sent is echoed (the good echoes beyond what was out aside), in flight or lost.
                Assert.That(sent, Is.EqualTo(t.ReceivedTotal - t.GatingViolations + t.InFlight + t.Lost), where);
            });
        }
    }

    /// <summary>A packet as a sender writes it: the length header, the phase byte, a send time, the filler.</summary>
    private static byte[] Packet(LoadPlan plan, byte[] expectedBody, bool measured)
    {
        byte[] packet = new byte[plan.PacketLength];
        BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)plan.Size);
        expectedBody.AsSpan(9).CopyTo(packet.AsSpan(4 + 9));
        packet[4] = measured ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteInt64LittleEndian(packet.AsSpan(5), LoadPlan.NowNanoseconds());
        return packet;
    }
}
