// Several client hosts for real: one --role server process, two --role client processes with a
// shared --start-at and --json-histogram, then `merge` of their files, which must give the sums of
// their counts and exactly the percentiles of their histograms merged directly. And a --start-at
// already past: the client warns and runs at once.
using static NetZlink.Stress.Tests.Support.Histograms;

namespace NetZlink.Stress.Tests.Merge;

public sealed class SeveralHostsEndToEndTests : IntegrationFixture
{
    private const double WarmupSeconds = 1;

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task TwoClientsStartTogetherAndTheirMergeIsExact(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        using StressProcess server = StressProcess.Start("--role", "server", "--exit-on-stdin-eof", "--port", "0", "--quiet");
        string port = (await server.WaitForReadyPortAsync(cancellationToken)).ToString(CultureInfo.InvariantCulture);
        // Far enough ahead for both processes to start and connect on a busy machine.
        long startAt = DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 6;
        string[] Client(string json, int ccu) =>
        [
            "--role", "client", "--port", port, "--ccu", Invariant(ccu), "--shards", "1", "--inflight", "4",
            "--warmup", Invariant(WarmupSeconds), "--measure", "1", "--drain-timeout", "5",
            "--start-at", Invariant(startAt), "--json-histogram", "--summary-json", temp.File(json),
        ];

        using StressProcess a = StressProcess.Start(Client("a.json", 12));
        using StressProcess b = StressProcess.Start(Client("b.json", 8));
        await a.WaitForExitAsync(cancellationToken);
        await b.WaitForExitAsync(cancellationToken);
        server.CloseStdin();
        await server.WaitForExitAsync(cancellationToken);

        foreach (StressProcess client in new[] { a, b })
        {
            Assert.Multiple(() =>
            {
                Assert.That(client.ExitCode, Is.Zero, client.Stdout + "\n" + client.Stderr);
                Assert.That(client.Stderr, Does.Match(@"phase=wait conns=\d+ .* starts_in=\d+\.\ds"), "the progress line shows the wait");
                Assert.That(client.Stderr, Does.Not.Contain("warning"));
            });
        }

        using JsonDocument aJson = JsonDocument.Parse(await File.ReadAllTextAsync(temp.File("a.json"), cancellationToken));
        using JsonDocument bJson = JsonDocument.Parse(await File.ReadAllTextAsync(temp.File("b.json"), cancellationToken));
        JsonElement[] hosts = [aJson.RootElement, bJson.RootElement];
        var parts = new List<HistogramBase>();
        foreach (JsonElement host in hosts)
        {
            // Each waited for the start time, then warmed up, before measuring.
            Assert.That(host.GetProperty(MergeInputJson.Name).GetProperty("measure_started_at").GetDouble(),
                Is.GreaterThanOrEqualTo(startAt + WarmupSeconds));
            parts.Add(Histograms.FromSummary(host));
        }

        var direct = LatencyHistograms.Merge(parts);
        AssertAloneMergesIntoItsOwnFigures(temp.File("a.json"), a);

        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int code = MergeCommand.Run([temp.File("a.json"), temp.File("b.json")], stdout, stderr);

        string result = Line(stdout.ToString(), "RESULT ");
        long Sum(string name) => hosts.Sum(h => h.GetProperty(name).GetInt64());
        double throughput = hosts.Sum(h => h.GetProperty(MergeInputJson.Name).GetProperty("throughput").GetDouble());
        Assert.Multiple(() =>
        {
            Assert.That(code, Is.Zero, stdout + "\n" + stderr);
            Assert.That(Number(result, "ccu"), Is.EqualTo(20));
            Assert.That(Number(result, "connect_success"), Is.EqualTo(20));
            Assert.That(Number(result, "sent"), Is.EqualTo(Sum("sent")).And.Positive);
            Assert.That(Number(result, "recv"), Is.EqualTo(Sum("recv")));
            Assert.That(Number(result, "hosts"), Is.EqualTo(2));
            Assert.That(Field(result, "throughput"), Is.EqualTo(throughput.ToString("F2", CultureInfo.InvariantCulture)));
            Assert.That(direct.TotalCount, Is.Positive);
            Assert.That(Field(result, "p50_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(50))));
            Assert.That(Field(result, "p95_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(95))));
            Assert.That(Field(result, "p99_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(99))));
            Assert.That(Field(result, "p999_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(99.9))));
            Assert.That(Field(result, "max_us"), Is.EqualTo(Us(direct.GetMaxValue())));
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task AStartTimeAlreadyPastWarnsAndRunsAtOnce(CancellationToken cancellationToken)
    {
        long past = DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 5;

        using StressProcess run = await StressProcess.RunAsync(
            cancellationToken, "--scenario", "s0", "--port", Invariant(FreePort.Next()), "--start-at", Invariant(past), "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Stdout + "\n" + run.Stderr);
            Assert.That(Field(Line(run.Stdout, "RESULT "), "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(run.Stderr, Does.Contain($"warning: --start-at {past} had passed ").And.Contain(" s before this client was connected; starting now"));
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task TheDotnetStacksSummaryCarriesTheSameHistogram(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        string json = temp.File("dotnet.json");

        using StressProcess run = await StressProcess.RunAsync(
            cancellationToken, "--stack", "dotnet", "--ccu", "6", "--shards", "1", "--inflight", "4", "--warmup", "0", "--measure", "1",
            "--port", Invariant(FreePort.Next()), "--json-histogram", "--summary-json", json, "--quiet");

        Assert.That(run.ExitCode, Is.Zero, run.Stdout + "\n" + run.Stderr);
        Assert.That(Field(Line(run.Stdout, "RESULT "), "stack"), Is.EqualTo("dotnet"));
        AssertAloneMergesIntoItsOwnFigures(json, run);
    }

    /// <summary>One host's file merged alone gives back its own run's counts and latency figures.</summary>
    private static void AssertAloneMergesIntoItsOwnFigures(string json, StressProcess host)
    {
        using var alone = new StringWriter();
        Assert.That(MergeCommand.Run([json], alone, TextWriter.Null), Is.Zero);
        string own = Line(host.Stdout, "RESULT ");
        string merged = Line(alone.ToString(), "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(Number(own, "recv"), Is.Positive);
            foreach (string field in new[] { "ccu", "sent", "recv", "throughput", "p50_us", "p95_us", "p99_us", "p999_us", "max_us", "stdev_us", "stack", "pass_fail" })
            {
                Assert.That(Field(merged, field), Is.EqualTo(Field(own, field)), field);
            }
        });
    }

    private static string Invariant(double value) => value.ToString(CultureInfo.InvariantCulture);
}
