// The open-model schedule and a shard's walk along it, on a made-up clock: which packets are due
// when, that the connections share the rate evenly, and that every shard together sees every
// packet of the phase exactly once, in due order.

namespace NetZlink.Stress.Tests.Scenarios;

[TestFixture]
public sealed class OpenScheduleTests
{
    private const long Start = 5_000_000_000;

    [Test]
    [CancelAfter(10_000)]
    public void PacketsAreDueEveryOneOverRateAndGoRoundTheConnections()
    {
        // 1000 packets/s over 3 connections for 0.01 s: packets 0..9, 1 ms apart.
        var schedule = new OpenSchedule(1000, 3, Start, 0.01);

        Assert.Multiple(() =>
        {
            Assert.That(schedule.PacketsInPhase, Is.EqualTo(10));
            Assert.That(schedule.DueCount(Start - 1), Is.Zero);
            Assert.That(schedule.DueCount(Start), Is.EqualTo(1));
            Assert.That(schedule.DueCount(Start + 999_999), Is.EqualTo(1));
            Assert.That(schedule.DueCount(Start + 1_000_000), Is.EqualTo(2));
            Assert.That(schedule.DueCount(Start + 60_000_000_000), Is.EqualTo(10), "nothing past the phase's end");
            // Connection 1 has packets 1, 4, 7: due at 1, 4 and 7 ms.
            Assert.That(schedule.DueAtNs(1, 0), Is.EqualTo(Start + 1_000_000));
            Assert.That(schedule.DueAtNs(1, 2), Is.EqualTo(Start + 7_000_000));
            Assert.That(schedule.DueFor(1, Start + 3_999_999), Is.EqualTo(1));
            Assert.That(schedule.DueFor(1, Start + 4_000_000), Is.EqualTo(2));
            Assert.That(new[] { 0, 1, 2 }.Select(schedule.TotalFor), Is.EqualTo(new long[] { 4, 3, 3 }));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ADuePacketsTimeIsNeverAfterTheClockThatMadeItDue()
    {
        var schedule = new OpenSchedule(3333.3, 7, Start, 2);
        for (long now = Start; now < Start + 2_000_000_000L; now += 123_457)
        {
            for (int k = 0; k < 7; k++)
            {
                long due = schedule.DueFor(k, now);
                if (due > 0)
                {
                    Assert.That(schedule.DueAtNs(k, due - 1), Is.LessThanOrEqualTo(now), $"connection {k} at {now}");
                }

                Assert.That(schedule.DueAtNs(k, due), Is.GreaterThan(now), $"connection {k}'s next packet at {now}");
            }
        }
    }

    [Test]
    [CancelAfter(10_000)]
    public void RefusesARateThatIsNotPositive()
    {
        Assert.Multiple(() =>
        {
            Assert.That(() => new OpenSchedule(0, 1, Start, 1), Throws.InstanceOf<ArgumentOutOfRangeException>());
            Assert.That(() => new OpenSchedule(double.NaN, 1, Start, 1), Throws.InstanceOf<ArgumentOutOfRangeException>());
            Assert.That(() => new OpenSchedule(10, 0, Start, 1), Throws.InstanceOf<ArgumentOutOfRangeException>());
        });
    }

    [TestCase(10, 1, 1000.0)]
    [TestCase(10, 3, 1000.0)]
    [TestCase(7, 3, 250.0)]
    [TestCase(2, 4, 50.0)]
    [CancelAfter(10_000)]
    public void EveryShardTogetherSeesEachPacketOnceInDueOrder(int ccu, int shards, double rate)
    {
        var schedule = new OpenSchedule(rate, ccu, Start, 0.1);
        int shardCount = Math.Min(shards, ccu);
        var seen = new Dictionary<int, long>();
        for (int shard = 0; shard < shardCount; shard++)
        {
            int slots = (ccu - shard + shardCount - 1) / shardCount;
            var pacer = new ShardPacer(shard, shardCount, slots);
            var sink = new CountingSink();
            pacer.Begin(schedule);
            long now = Start - 1;
            long next = pacer.Advance(now, sink);
            Assert.That(sink.Slots, Is.Empty, "nothing is due before the start");
            while (next != long.MaxValue)
            {
                Assert.That(next, Is.GreaterThan(now), "the next due time is ahead of the clock that asked");
                now = next;
                next = pacer.Advance(now, sink);
                // Every slot named is due by now, with its next packet after now.
                foreach (int slot in sink.Slots)
                {
                    int k = pacer.ConnectionOf(slot);
                    Assert.That(schedule.DueAtNs(k, schedule.DueFor(k, now) - 1), Is.LessThanOrEqualTo(now));
                }

                foreach (int slot in sink.Slots)
                {
                    int k = pacer.ConnectionOf(slot);
                    seen[k] = seen.GetValueOrDefault(k) + 1;
                }

                sink.Slots.Clear();
            }
        }

        Assert.Multiple(() =>
        {
            Assert.That(seen.Keys.Order(), Is.EqualTo(Enumerable.Range(0, (int)Math.Min(ccu, schedule.PacketsInPhase))));
            foreach ((int k, long count) in seen)
            {
                Assert.That(count, Is.EqualTo(schedule.TotalFor(k)), $"connection {k}");
            }

            Assert.That(seen.Values.Sum(), Is.EqualTo(schedule.PacketsInPhase));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AShardThatFallsARoundBehindHearsOfEverySlotOnce()
    {
        var schedule = new OpenSchedule(1000, 4, Start, 1);
        var pacer = new ShardPacer(0, 1, 4);
        var sink = new CountingSink();
        pacer.Begin(schedule);

        long next = pacer.Advance(Start + 500_000_000, sink);

        Assert.Multiple(() =>
        {
            Assert.That(sink.Slots, Is.EqualTo(new[] { 0, 1, 2, 3 }), "each slot once: it works out how many it owes");
            Assert.That(next, Is.EqualTo(Start + 501_000_000));
            Assert.That(schedule.DueFor(0, Start + 500_000_000), Is.EqualTo(126));
        });
    }

    private sealed class CountingSink : IDueSink
    {
        public List<int> Slots { get; } = [];

        public void OnDue(int slot) => Slots.Add(slot);
    }
}
