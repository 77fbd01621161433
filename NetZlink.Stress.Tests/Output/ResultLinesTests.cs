// The RESULT and METRIC lines: ResultSchema's fields for each line, in the table's order, with its number formats.

namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class ResultLinesTests
{
    private const string PassResultLine =
        "RESULT scenario=s2 transport=tcp ccu=200 inflight=30 size=1024 connect_success=200 connect_fail=0 " +
        "connect_timeout=0 sent=3000000 recv=2999997 incomplete_ratio=0.000001 throughput=299999.70 " +
        "p50_us=812.35 p95_us=1500.50 p99_us=2001.10 pass_fail=PASS drain_timeout=0 gating_violation=0 " +
        "p999_us=3333.33 max_us=12000.50 stdev_us=99.99 stack=netzlink shards=2 hosts=1 cpu_s=3.46 peak_rss_mb=150.3 " +
        "alloc_bytes_per_packet=0.250000 interrupted=0 protocol_errors=0 disconnects=0 lost=0 fail_reason=none rate=0.00 late=0 connect_s=0.123 connect_rate=1620.1 client_kb_per_conn=4.88 server_kb_per_conn=1.46";

    private const string PassMetricLine =
        "METRIC scenario_id=netzlink-s2 transport=tcp ccu=200 inflight=30 size=1024 connect_success=200 " +
        "connect_fail=0 connect_timeout=0 sent=3000000 recv=2999997 incomplete_ratio=0.000001 " +
        "throughput=299999.70 p50_us=812.35 p95_us=1500.50 p99_us=2001.10 errors_by_errno=104:3;110:2 pass_fail=PASS " +
        "drain_timeout=0 gating_violation=0 p999_us=3333.33 max_us=12000.50 stdev_us=99.99 stack=netzlink " +
        "shards=2 hosts=1 cpu_s=3.46 peak_rss_mb=150.3 alloc_bytes_per_packet=0.250000 interrupted=0 " +
        "protocol_errors=0 disconnects=0 lost=0 fail_reason=none rate=0.00 late=0 startup_to_connected_ms=91.23 " +
        "startup_to_first_echo_ms=104.50 first_n=100 first_n_p50_us=2345.68 first_n_max_us=9876.50 server_samples=187500 " +
        "server_p50_us=6.13 server_p99_us=30.50 server_max_us=5230.59 connect_s=0.123 connect_rate=1620.1 client_kb_per_conn=4.88 " +
        "server_kb_per_conn=1.46";

    [Test]
    [CancelAfter(10_000)]
    public void ResultLineHasItsFieldsInTheSchemasOrder()
    {
        Assert.That(ResultLines.Result(SampleResults.Pass()), Is.EqualTo(PassResultLine));
    }

    [Test]
    [CancelAfter(10_000)]
    public void MetricLineHasItsFieldsInTheSchemasOrder()
    {
        Assert.That(ResultLines.Metric(SampleResults.Pass()), Is.EqualTo(PassMetricLine));
    }

    [Test]
    [CancelAfter(10_000)]
    public void NumbersUseTheInvariantCultureWhateverTheCurrentOne()
    {
        CultureInfo before = CultureInfo.CurrentCulture;
        try
        {
            CultureInfo.CurrentCulture = CultureInfo.GetCultureInfo("de-DE");
            Assert.That(ResultLines.Result(SampleResults.Pass()), Is.EqualTo(PassResultLine));
        }
        finally
        {
            CultureInfo.CurrentCulture = before;
        }
    }

    [Test]
    [CancelAfter(10_000)]
    public void FailCarriesItsQuotedReasonLastAndQuotesTextsWithSpaces()
    {
        ScenarioResult fail = SampleResults.Fail();

        Assert.Multiple(() =>
        {
            Assert.That(ResultLines.Result(fail), Does.EndWith(" pass_fail=FAIL drain_timeout=0 gating_violation=0 p999_us=0.00 max_us=0.00 stdev_us=0.00 stack=netzlink shards=0 hosts=1 cpu_s=0.00 peak_rss_mb=0.0 alloc_bytes_per_packet=0.000000 interrupted=0 protocol_errors=0 disconnects=0 lost=0 fail_reason=connect_fail rate=0.00 late=0 connect_s=0.000 connect_rate=0.0 client_kb_per_conn=0.00 server_kb_per_conn=0.00 reason=\"drain timed out, 3 \\\"packets\\\" left\""));
            Assert.That(ResultLines.Metric(fail), Does.StartWith("METRIC scenario_id=\"my run\" transport=tcp ccu=5 "));
            Assert.That(ResultLines.Metric(fail), Does.Contain(" errors_by_errno=111:5 pass_fail=FAIL "));
            Assert.That(ResultLines.Metric(fail), Does.EndWith(" reason=\"drain timed out, 3 \\\"packets\\\" left\""));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void SkipNamesTheMissingTransport()
    {
        var skip = new ScenarioResult
        {
            Settings = new ScenarioSettings { Transport = "tls" },
            PassFail = "SKIP",
            Reason = "transport tls is not available in this native library",
        };

        Assert.That(ResultLines.Result(skip), Does.Contain(" transport=tls ").And.Contain(" pass_fail=SKIP ")
            .And.EndWith(" reason=\"transport tls is not available in this native library\""));
    }

    [Test]
    [CancelAfter(10_000)]
    public void APassingRunPrintsNoReasonAndNoErrnosAsAnEmptyValue()
    {
        ScenarioResult pass = SampleResults.Pass();
        pass.Reason = "left over";
        pass.ErrorsByErrno.Clear();

        Assert.That(ResultLines.Metric(pass), Does.Contain(" errors_by_errno= pass_fail=PASS ").And.Not.Contains(" reason="));
    }

    [Test]
    [CancelAfter(10_000)]
    public void InterruptedRunsAreMarked()
    {
        ScenarioResult result = SampleResults.Pass();
        result.Interrupted = true;

        Assert.That(ResultLines.Result(result), Does.Contain(" interrupted=1 "));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AReasonStaysOnOneLine()
    {
        Assert.That(ResultLines.Result(SampleResults.Fail("first\nsecond")), Does.EndWith(" reason=\"first second\"").And.Not.Contains('\n'));
    }
}
