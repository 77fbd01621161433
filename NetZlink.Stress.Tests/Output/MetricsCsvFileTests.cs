// --metrics-csv: the schema's CSV columns; one row per run; the header only once.

namespace NetZlink.Stress.Tests.Output;

[TestFixture]
public sealed class MetricsCsvFileTests
{
    private const string LeadingColumns =
        "scenario_id,transport,ccu,inflight,size,connect_success,connect_fail,connect_timeout,sent,recv,incomplete_ratio,throughput,p50_us,p95_us,p99_us,errors_by_errno,pass_fail";

    [Test]
    [CancelAfter(10_000)]
    public void HeaderNamesTheSchemasCsvColumnsInOrder()
    {
        Assert.That(MetricsCsvFile.Header, Is.EqualTo(LeadingColumns +
            ",drain_timeout,gating_violation,p999_us,max_us,stdev_us,stack,shards,hosts,cpu_s,peak_rss_mb,alloc_bytes_per_packet,interrupted,protocol_errors,disconnects,lost,fail_reason,rate,late," +
            "startup_to_connected_ms,startup_to_first_echo_ms,first_n,first_n_p50_us,first_n_max_us,server_samples,server_p50_us,server_p99_us,server_max_us," +
            "connect_s,connect_rate,client_kb_per_conn,server_kb_per_conn,reason"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void RowFollowsTheHeader()
    {
        Assert.That(MetricsCsvFile.Row(SampleResults.Pass()), Is.EqualTo(
            "netzlink-s2,tcp,200,30,1024,200,0,0,3000000,2999997,0.000001,299999.70,812.35,1500.50,2001.10,104:3;110:2,PASS," +
            "0,0,3333.33,12000.50,99.99,netzlink,2,1,3.46,150.3,0.250000,0,0,0,0,none,0.00,0," +
            "91.23,104.50,100,2345.68,9876.50,187500,6.13,30.50,5230.59,0.123,1620.1,4.88,1.46,"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void FieldsWithCommasOrQuotesAreQuoted()
    {
        Assert.That(MetricsCsvFile.Row(SampleResults.Fail()), Is.EqualTo(
            "my run,tcp,5,30,1024,0,5,0,0,0,0.000000,0.00,0.00,0.00,0.00,111:5,FAIL," +
            "0,0,0.00,0.00,0.00,netzlink,0,1,0.00,0.0,0.000000,0,0,0,0,connect_fail,0.00,0,0.00,0.00,0,0.00,0.00,0,0.00,0.00,0.00,0.000,0.0,0.00,0.00,\"drain timed out, 3 \"\"packets\"\" left\""));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AppendWritesTheHeaderOnceIntoANewFile()
    {
        using var temp = new TempDirectory();
        string path = temp.File("sub/dir/metrics.csv");

        MetricsCsvFile.Append(path, SampleResults.Pass());
        MetricsCsvFile.Append(path, SampleResults.Fail());

        Assert.That(File.ReadAllText(path), Is.EqualTo(
            MetricsCsvFile.Header + "\n" + MetricsCsvFile.Row(SampleResults.Pass()) + "\n" + MetricsCsvFile.Row(SampleResults.Fail()) + "\n"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AppendWritesTheHeaderIntoAnEmptyFileAndNotIntoOneWithRows()
    {
        using var temp = new TempDirectory();
        string empty = temp.File("empty.csv");
        string existing = temp.File("existing.csv");
        File.WriteAllText(empty, string.Empty);
        File.WriteAllText(existing, "earlier rows\n");

        MetricsCsvFile.Append(empty, SampleResults.Pass());
        MetricsCsvFile.Append(existing, SampleResults.Pass());

        Assert.Multiple(() =>
        {
            Assert.That(File.ReadAllLines(empty), Is.EqualTo(new[] { MetricsCsvFile.Header, MetricsCsvFile.Row(SampleResults.Pass()) }));
            Assert.That(File.ReadAllLines(existing), Is.EqualTo(new[] { "earlier rows", MetricsCsvFile.Row(SampleResults.Pass()) }));
        });
    }
}
