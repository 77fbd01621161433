// limit_echo's COUNTS line: read into a result judged by the runner's rules (the same reasons and
// fail_reason a .NET stack's counts would get), latency kept as HdrHistogram would have recorded
// the raw samples, and every malformed line refused with what is wrong.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class LimitEchoCountsTests
{
    internal const string Pass =
        "COUNTS version=4 scenario=s2 ccu=20 size=1024 inflight=30 warmup_s=0.3 measure_s=0.5 drain_timeout_s=10 latency_sample_rate=16 rate=0 " +
        "connected=20 connect_failed=0 connect_timed_out=0 disconnected=0 sent_total=1856310 received_total=1856310 sent_measured=1158240 " +
        "received_measured=1158230 in_flight=0 gating_violation=0 bad_echoes=0 peer_closed=0 protocol_errors=0 lost=0 late=0 " +
        "drain_timeout=0 drain_wait=none outstanding=0 unsent=0 interrupted=0 throughput_ns=500000000 cpu_us=401300 peak_rss_kb=2296 " +
        "startup_to_connected_ns=812345 startup_to_first_echo_ns=1734000 errors_by_errno= first_n_ns=250880:90,1003520:10 " +
        "latency_ns=121536:1,126720:2,2101248:3";

    [Test]
    [CancelAfter(10_000)]
    public void APassingLineBecomesAPassingCEpollResult()
    {
        ScenarioResult r = LimitEchoCounts.Parse(Pass);

        Assert.Multiple(() =>
        {
            Assert.That(r.PassFail, Is.EqualTo("PASS"), r.Reason);
            Assert.That(r.FailReason, Is.EqualTo(FailReasons.None));
            Assert.That(r.Stack, Is.EqualTo("c-epoll"));
            Assert.That(ResultSchema.ScenarioId(r), Is.EqualTo("c-epoll-s2"));
            Assert.That(r.Settings.Ccu, Is.EqualTo(20));
            Assert.That(r.Settings.MeasureSeconds, Is.EqualTo(0.5));
            Assert.That(r.Sent, Is.EqualTo(1_158_240));
            Assert.That(r.Recv, Is.EqualTo(1_158_230));
            Assert.That(r.Throughput, Is.EqualTo(1_158_230 / 0.5));
            Assert.That(r.CpuSeconds, Is.EqualTo(0.4013));
            Assert.That(r.PeakRssBytes, Is.EqualTo(2296 * 1024));
            Assert.That(r.ShardCount, Is.EqualTo(1));
            Assert.That(r.AllocatedBytesPerPacket, Is.Zero);
            Assert.That(r.LatencySamples, Is.EqualTo(6));
            Assert.That(r.P50Us, Is.EqualTo(LatencyHistograms.PercentileUs(r.Latency!, 50)).And.InRange(126.7, 126.8));
            Assert.That(r.MaxUs, Is.InRange(2101.2, 2103.3));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void Version3CarriesTheColdStartFigures()
    {
        ScenarioResult r = LimitEchoCounts.Parse(Pass);
        ScenarioResult none = LimitEchoCounts.Parse(Pass.Replace("first_n_ns=250880:90,1003520:10", "first_n_ns=")
            .Replace("startup_to_first_echo_ns=1734000", "startup_to_first_echo_ns=0"));

        Assert.Multiple(() =>
        {
            Assert.That(r.StartupToConnectedMs, Is.EqualTo(0.812345));
            Assert.That(r.StartupToFirstEchoMs, Is.EqualTo(1.734));
            Assert.That(r.FirstN, Is.EqualTo(100));
            // 90 of the 100 in the 250880 ns bucket: the median is there, the maximum in the other.
            Assert.That(r.FirstNP50Us, Is.InRange(250.88, 251.1));
            Assert.That(r.FirstNMaxUs, Is.InRange(1003.5, 1004.6));
            Assert.That(none.FirstN, Is.Zero);
            Assert.That(none.FirstNP50Us, Is.Zero);
            Assert.That(none.StartupToFirstEchoMs, Is.Zero);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AnOpenModelLineCarriesItsRateLateAndTheMeasuredPacketsNeverSent()
    {
        ScenarioResult passed = LimitEchoCounts.Parse(Pass.Replace("rate=0", "rate=2000").Replace("late=0", "late=7"), "c-epoll-s2-open");
        ScenarioResult heldBack = LimitEchoCounts.Parse(Pass.Replace("rate=0", "rate=2000")
            .Replace("drain_timeout=0 drain_wait=none outstanding=0 unsent=0", "drain_timeout=1 drain_wait=drain outstanding=12 unsent=3"));

        Assert.Multiple(() =>
        {
            Assert.That(passed.Settings.Rate, Is.EqualTo(2000));
            Assert.That(passed.Late, Is.EqualTo(7));
            Assert.That(ResultSchema.ScenarioId(passed), Is.EqualTo("c-epoll-s2-open"));
            Assert.That(heldBack.PassFail, Is.EqualTo("FAIL"));
            Assert.That(heldBack.Reason, Is.EqualTo("12 packets still outstanding and 3 measured packets still not sent (held back by --inflight or a full send queue) after the 10 s drain timeout"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void FailuresGetTheRunnersReasonsAndCause()
    {
        ScenarioResult closed = LimitEchoCounts.Parse(Pass.Replace(" peer_closed=0 ", " peer_closed=3 ").Replace(" lost=0 ", " lost=5 ").Replace(" in_flight=0 ", " in_flight=2 "));
        ScenarioResult drained = LimitEchoCounts.Parse(Pass.Replace("drain_timeout=0 drain_wait=none outstanding=0", "drain_timeout=1 drain_wait=drain outstanding=12"));
        ScenarioResult settle = LimitEchoCounts.Parse(Pass.Replace("drain_timeout=0 drain_wait=none outstanding=0", "drain_timeout=1 drain_wait=settle outstanding=4"));
        ScenarioResult refused = LimitEchoCounts.Parse(Pass.Replace("connected=20 connect_failed=0", "connected=17 connect_failed=3").Replace("errors_by_errno= ", "errors_by_errno=111:12 "));

        Assert.Multiple(() =>
        {
            Assert.That(closed.PassFail, Is.EqualTo("FAIL"));
            Assert.That(closed.FailReason, Is.EqualTo(FailReasons.ServerClosed));
            Assert.That(closed.Lost, Is.EqualTo(7), "dropped with their connections plus still outstanding at the end, as the runner counts");
            Assert.That(closed.Reason, Is.EqualTo("the server closed 3 connections during the run; 7 packets sent and never echoed"));
            Assert.That(drained.FailReason, Is.EqualTo(FailReasons.DrainTimeout));
            Assert.That(drained.Reason, Is.EqualTo(ScenarioRunner.DrainTimeoutReason(12, 0, 10)).And.EqualTo("12 packets still outstanding after the 10 s drain timeout"));
            Assert.That(settle.Reason, Is.EqualTo("warm-up packets still outstanding after the 10 s drain timeout"));
            Assert.That(refused.FailReason, Is.EqualTo(FailReasons.ConnectFail));
            Assert.That(refused.Reason, Is.EqualTo("connected 17 of 20 (failed 3, timed out 0)"));
            Assert.That(ResultLines.Metric(refused), Does.Contain(" errors_by_errno=111:12 pass_fail=FAIL "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void CuttingSamplesToTheir11TopBitsGivesTheHistogramOfTheRawSamples()
    {
        // limit_echo's rule, as its header documents it.
        static long BucketFloor(long v)
        {
            int bits = 64 - System.Numerics.BitOperations.LeadingZeroCount((ulong)v);
            int shift = Math.Max(0, bits - 11);
            return (v >> shift) << shift;
        }

        var random = new Random(5);
        var raw = LatencyHistograms.Create();
        var pairs = new SortedDictionary<long, long>();
        for (int i = 0; i < 50_000; i++)
        {
            long v = (long)Math.Exp(random.NextDouble() * 25);
            LatencyHistograms.Record(raw, v);
            long floor = BucketFloor(v);
            Assert.That(floor, Is.EqualTo(raw.LowestEquivalentValue(v)), $"{v}");
            pairs[floor] = pairs.GetValueOrDefault(floor) + 1;
        }

        string latency = string.Join(',', pairs.Select(p => string.Create(CultureInfo.InvariantCulture, $"{p.Key}:{p.Value}")));
        ScenarioResult r = LimitEchoCounts.Parse(Pass.Replace("latency_ns=121536:1,126720:2,2101248:3", "latency_ns=" + latency));

        Assert.That(Histograms.Buckets(r.Latency!), Is.EqualTo(Histograms.Buckets(raw)));
    }

    // Each case replaces <from> in a good line by <to>; an empty <from> replaces the whole line.
    [TestCase("", "RESULT scenario=s2", "not a COUNTS line")]
    [TestCase("", "COUNTS version=1", "version 1 is not one this build reads (4)")]
    [TestCase("", "COUNTS version=2 scenario=s2", "version 2 is not one this build reads (4)")]
    [TestCase("", "COUNTS version=3 scenario=s2", "version 3 is not one this build reads (4)")]
    [TestCase("", "COUNTS version=4 scenario=s2", "ccu= is missing")]
    [TestCase(" startup_to_connected_ns=812345", "", "startup_to_connected_ns= is missing")]
    [TestCase("startup_to_first_echo_ns=1734000", "startup_to_first_echo_ns=1.5", "startup_to_first_echo_ns must be a whole number")]
    [TestCase(" first_n_ns=250880:90,1003520:10", "", "first_n_ns= is missing")]
    [TestCase("first_n_ns=250880:90,1003520:10", "first_n_ns=250880:0", "first_n_ns must be value:count pairs joined by ',' (got \"250880:0\")")]
    [TestCase(" rate=0", "", "rate= is missing")]
    [TestCase("rate=0", "rate=-5", "rate must be a number, 0 or more (got \"-5\")")]
    [TestCase(" late=0", "", "late= is missing")]
    [TestCase(" sent_total=1856310", "", "sent_total= is missing")]
    [TestCase("sent_total=1856310", "sent_total=-4", "sent_total must be a whole number, 0 or more (got \"-4\")")]
    [TestCase("latency_ns=121536:1,126720:2,2101248:3", "latency_ns=12,3", "latency_ns must be value:count pairs joined by ',' (got \"12\")")]
    [TestCase("errors_by_errno=", "errors_by_errno=111", "errors_by_errno must be errno:count pairs")]
    [TestCase("drain_timeout=0 drain_wait=none", "drain_timeout=1 drain_wait=later", "drain_wait must be settle, drain or echo")]
    [TestCase("interrupted=0", "interrupted=2", "interrupted must be 0 or 1 (got 2)")]
    [TestCase("ccu=20", "ccu=20 ccu=21", "\"ccu=21\" is not a name=value pair of its own")]
    [CancelAfter(10_000)]
    public void MalformedLinesAreRefusedNamingTheProblem(string from, string to, string problem)
    {
        string line = from.Length == 0 ? to : Pass.Replace(from, to, StringComparison.Ordinal);

        var e = Assert.Throws<InvalidDataException>(() => LimitEchoCounts.Parse(line))!;
        Assert.That(e.Message, Does.StartWith("limit_echo's COUNTS line: ").And.Contain(problem));
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheLineIsFoundAmongTheClientsOutput()
    {
        Assert.Multiple(() =>
        {
            Assert.That(LimitEchoCounts.Find(["[  1.0s] phase=measure", Pass, ""]), Is.EqualTo(Pass));
            Assert.That(LimitEchoCounts.Find(["RESULT scenario=s2"]), Is.Null);
        });
    }
}
