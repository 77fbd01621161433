// The SERVER_TIME line: what a server writes reads back into the same histogram and figures, the
// process-start stamp is read as documented, and a malformed line is refused naming the problem.
namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class ServerTimeLineTests
{
    [Test]
    [CancelAfter(10_000)]
    public void WhatAServerWritesReadsBackBucketForBucket()
    {
        var times = new ServerTimes(sampleRate: 1);
        var random = new Random(11);
        var expected = LatencyHistograms.Create();
        for (int i = 0; i < 5000; i++)
        {
            long ns = (long)Math.Exp(random.NextDouble() * 20);
            LatencyHistograms.Record(expected, ns);
            times.RecordSince(ServerTimes.Now() - ns);
        }

        string line = ServerTimeLine.Format(times.Merged());
        ServerTimeLine read = ServerTimeLine.Parse(line);
        var result = new ScenarioResult { Settings = new ScenarioSettings() };
        read.ApplyTo(result);

        Assert.Multiple(() =>
        {
            Assert.That(line, Does.StartWith("SERVER_TIME version=1 samples=5000 time_ns="));
            Assert.That(read.Times.TotalCount, Is.EqualTo(5000));
            Assert.That(result.ServerTimeSamples, Is.EqualTo(5000));
            // Each value was recorded a moment after its start was taken, so never below it.
            Assert.That(result.ServerP50Us, Is.GreaterThanOrEqualTo(LatencyHistograms.PercentileUs(expected, 50) * 0.999));
            Assert.That(result.ServerP99Us, Is.GreaterThanOrEqualTo(result.ServerP50Us));
            Assert.That(result.ServerMaxUs, Is.GreaterThanOrEqualTo(result.ServerP99Us));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void CountsTravelExactly()
    {
        var histogram = LatencyHistograms.Create();
        foreach (long ns in new long[] { 0, 1, 2047, 2048, 4097, 1_000_000, 123_456_789, LatencyHistograms.HighestTrackableNs })
        {
            LatencyHistograms.Record(histogram, ns);
        }

        Assert.That(Histograms.Buckets(ServerTimeLine.Parse(ServerTimeLine.Format(histogram)).Times), Is.EqualTo(Histograms.Buckets(histogram)));
    }

    [Test]
    [CancelAfter(10_000)]
    public void NoTimedReadIsZeroFigures()
    {
        var result = new ScenarioResult { Settings = new ScenarioSettings() };
        ServerTimeLine.Parse("SERVER_TIME version=1 samples=0 time_ns=").ApplyTo(result);

        Assert.Multiple(() =>
        {
            Assert.That(result.ServerTimeSamples, Is.Zero);
            Assert.That(result.ServerP50Us, Is.Zero);
            Assert.That(result.ServerMaxUs, Is.Zero);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AServerSamplesTheFirstReadOfAConnectionAndEveryNthAfter()
    {
        var every4 = new ServerTimes(4);
        var none = new ServerTimes(0);

        Assert.Multiple(() =>
        {
            Assert.That(Enumerable.Range(0, 10).Where(i => every4.Samples(i)), Is.EqualTo(new[] { 0, 4, 8 }));
            Assert.That(Enumerable.Range(0, 10).Any(i => none.Samples(i)), Is.False);
            Assert.Throws<ArgumentOutOfRangeException>(() => _ = new ServerTimes(-1));
        });
    }

    [TestCase("SERVER_TIME version=2 samples=0 time_ns=", "version 2 is not one this build reads (1)")]
    [TestCase("SERVER_TIME samples=0 time_ns=", "version (missing) is not one this build reads")]
    [TestCase("SERVER_TIME version=1 samples=x time_ns=", "samples must be a whole number")]
    [TestCase("SERVER_TIME version=1 samples=1", "time_ns= is missing")]
    [TestCase("SERVER_TIME version=1 samples=1 time_ns=5", "time_ns must be value:count pairs joined by ',' (got \"5\")")]
    [TestCase("SERVER_TIME version=1 samples=3 time_ns=5:1", "samples=3 but time_ns holds 1")]
    [TestCase("READY port=5", "not a SERVER_TIME line")]
    [CancelAfter(10_000)]
    public void MalformedLinesAreRefusedNamingTheProblem(string line, string problem)
    {
        var e = Assert.Throws<InvalidDataException>(() => ServerTimeLine.Parse(line))!;
        Assert.That(e.Message, Does.StartWith("the echo server's SERVER_TIME line: ").And.Contain(problem));
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheLaunchStampIsReadAsUnixSeconds()
    {
        Assert.Multiple(() =>
        {
            Assert.That(ProcessStart.AgeSeconds("1000.25", 1002.5), Is.EqualTo(2.25).Within(1e-9));
            Assert.That(ProcessStart.AgeSeconds("1000.25", 1000.0), Is.Zero, "a stamp a moment ahead (clock grain) is age 0");
            Assert.That(ProcessStart.AgeSeconds("1000", 990), Is.Null, "a stamp far in the future is not trusted");
            Assert.That(ProcessStart.AgeSeconds("soon", 1000), Is.Null);
            Assert.That(ProcessStart.AgeSeconds(null, 1000), Is.Null);
            Assert.That(ProcessStart.AgeSeconds(ProcessStart.LaunchedAtNow(), (DateTime.UtcNow - DateTime.UnixEpoch).TotalSeconds), Is.InRange(0, 5));
            // This test process has no stamp: its start comes from the kernel, some time before now.
            Assert.That(ProcessStart.MonotonicNs, Is.Positive.And.LessThan(LoadPlan.NowNanoseconds()));
        });
    }
}
