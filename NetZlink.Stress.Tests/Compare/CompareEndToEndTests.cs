// A whole compare at a tiny profile: every stack's server and client as real child processes,
// every file written, every run PASS, and reports that carry the runs' own figures. The limit
// clients (limit_echo for c-epoll and c-uring) print only their COUNTS line: their files come from
// the .NET writers. Where io_uring is refused, c-uring is skipped with the reason instead.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
[RequiresStreamClient]
public sealed class CompareEndToEndTests
{
    [Test]
    [CancelAfter(180_000)]
    public async Task TinyCompareWritesEveryFileAndPasses(CancellationToken cancellationToken)
    {
        string? uringRefused = await LimitEchoBinary.UringRefusedAsync(LimitEchoBinary.Locate(), cancellationToken);
        string[] stacks = CompareStacks.All.Where(s => uringRefused is null || s != CompareStacks.CUring).ToArray();

        using InProcessCompare compare = await InProcessCompare.RunAsync(
            ["--scenarios", "s0,s2", "--ccu", "20", "--warmup", "0", "--measure", "1.2", "--drain-timeout", "5"],
            cancellationToken);

        string log = compare.Stderr;
        Assert.That(compare.ExitCode, Is.EqualTo(0), log);
        foreach (string stack in stacks)
        {
            foreach (string scenario in new[] { "s0", "s2" })
            {
                RunPaths paths = RunPaths.For(compare.OutDir, stack, scenario);
                foreach (string file in new[] { paths.MetricsCsv, paths.SummaryJson, paths.Hgrm, paths.TimeseriesCsv, paths.Stdout })
                {
                    Assert.That(File.Exists(file), Is.True, $"{file} missing; {log}");
                }

                using JsonDocument summary = JsonDocument.Parse(File.ReadAllText(paths.SummaryJson));
                Assert.That(summary.RootElement.GetProperty("pass_fail").GetString(), Is.EqualTo("PASS"), $"{stack} {scenario}");
                Assert.That(summary.RootElement.GetProperty("stack").GetString(), Is.EqualTo(stack));
                string[] lines = File.ReadAllLines(paths.Stdout);
                Assert.That(lines, Has.One.StartsWith("RESULT scenario=" + scenario + " "));
                Assert.That(lines.Count(l => l.StartsWith("COUNTS version=" + LimitEchoCounts.Version + " scenario=" + scenario + " ", StringComparison.Ordinal)),
                    Is.EqualTo(CompareStacks.IsDotnetProcess(stack) ? 0 : 1), "only limit_echo prints a COUNTS line");

                // Every stack's server timed its own reads, and compare put them beside the client's round trip;
                // every client counted its start from compare's launch stamp.
                JsonElement r = summary.RootElement;
                Assert.That(lines, Has.One.StartsWith("SERVER_TIME version=1 "), $"{stack} {scenario}");
                Assert.That(r.GetProperty("server_samples").GetInt64(), Is.Positive, $"{stack} {scenario}");
                // Not "server <= client" for s0: the server's clock stops when its send returns, and on
                // loopback that send delivers the echo, so the client can take its time first (one
                // sample each, seen 135 µs against 58 µs on c-epoll s0 on a loaded machine). With
                // s2's many samples the client's round trip holds a queue of packets in flight.
                Assert.That(r.GetProperty("server_p50_us").GetDouble(),
                    scenario == "s0" ? Is.Positive : Is.Positive.And.LessThanOrEqualTo(r.GetProperty("p50_us").GetDouble()), $"{stack} {scenario}");
                Assert.That(r.GetProperty("startup_to_first_echo_ms").GetDouble(),
                    Is.Positive.And.GreaterThanOrEqualTo(r.GetProperty("startup_to_connected_ms").GetDouble()), $"{stack} {scenario}");
                Assert.That(r.GetProperty("first_n").GetInt64(), Is.EqualTo(scenario == "s0" ? 1 : 100), $"{stack} {scenario}");
            }

            Assert.That(TimeseriesPoint.ReadAll(RunPaths.For(compare.OutDir, stack, "s2").TimeseriesCsv), Is.Not.Empty,
                $"{stack} s2 wrote no per-second row");
        }

        // The limit row's files and lines come from the same writers as the .NET stacks'.
        RunPaths c = RunPaths.For(compare.OutDir, "c-epoll", "s2"), n = RunPaths.For(compare.OutDir, "netzlink", "s2");
        Assert.That(File.ReadLines(c.MetricsCsv).First(), Is.EqualTo(MetricsCsvFile.Header));
        Assert.That(PropertyNames(c.SummaryJson), Is.EqualTo(PropertyNames(n.SummaryJson)));
        Assert.That(Names(c.Stdout), Is.EqualTo(Names(n.Stdout)), "RESULT/METRIC field names");

        string md = await File.ReadAllTextAsync(Path.Combine(compare.OutDir, "report.md"), cancellationToken);
        string html = await File.ReadAllTextAsync(Path.Combine(compare.OutDir, "report.html"), cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(md, Does.Contain("| c-epoll | s2 | 20 | 30 | 1024 | 20 |"));
            Assert.That(md, Does.Contain("None: every run PASSed."));
            Assert.That(md, Does.Contain("## Cold start\n\n| stack | scenario | startup_to_connected_ms | startup_to_first_echo_ms |"));
            Assert.That(md, Does.Contain("## Server time beside round trip\n\n| stack | scenario | p50_us | server_p50_us |"));
            Assert.That(html, Does.Contain("<h2>Cold start</h2>").And.Contain("<h2>Server time beside round trip</h2>"));
            Assert.That(html, Does.Contain("<svg ").And.Not.Contain("http"));
            Assert.That(log, uringRefused is null
                ? Does.Contain("compare: run 8/8: c-uring s2").And.Not.Contain("skipped")
                : Does.Contain("compare: c-uring skipped: " + uringRefused));
            Assert.That(md, uringRefused is null ? Does.Contain("| c-uring | s2 | 20 | 30 | 1024 | 20 |") : Does.Contain("c-uring skipped: "));
            Assert.That(compare.Stdout, Does.Contain("RATIOS scenario=s2 netzlink/dotnet_throughput="));
        });
    }

    /// <summary>The field names of a stdout.txt's RESULT and METRIC lines.</summary>
    private static string[] Names(string stdout) =>
        File.ReadAllLines(stdout).Where(l => l.StartsWith("RESULT ", StringComparison.Ordinal) || l.StartsWith("METRIC ", StringComparison.Ordinal))
            .SelectMany(l => l.Split(' ').Select(f => f.Split('=')[0])).ToArray();

    private static string[] PropertyNames(string path)
    {
        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(path));
        return json.RootElement.EnumerateObject().Select(p => p.Name).ToArray();
    }
}
