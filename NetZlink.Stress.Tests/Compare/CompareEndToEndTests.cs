// A whole compare at a tiny profile: every stack's server and client as real child processes,
// every file written, every run PASS, and reports that carry the runs' own figures.
using System.Text.Json;
using NetZlink.Stress.Compare;
using NetZlink.Stress.Output;
using NetZlink.Stress.Tests.Support;

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class CompareEndToEndTests
{
    [Test]
    [CancelAfter(180_000)]
    public async Task TinyCompareWritesEveryFileAndPasses(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        string outDir = temp.File("out");
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();

        int exitCode = await CompareCommand.RunAsync(
            ["--out", outDir, "--scenarios", "s0,s2", "--ccu", "20", "--warmup", "0", "--measure", "1.2", "--drain-timeout", "5"],
            stdout, stderr, cancellationToken);

        string log = stderr.ToString();
        Assert.That(exitCode, Is.EqualTo(0), log);
        foreach (string stack in CompareStacks.All)
        {
            foreach (string scenario in new[] { "s0", "s2" })
            {
                RunPaths paths = RunPaths.For(outDir, stack, scenario);
                foreach (string file in new[] { paths.MetricsCsv, paths.SummaryJson, paths.TimeseriesCsv, paths.Stdout })
                {
                    Assert.That(File.Exists(file), Is.True, $"{file} missing; {log}");
                }

                using JsonDocument summary = JsonDocument.Parse(File.ReadAllText(paths.SummaryJson));
                Assert.That(summary.RootElement.GetProperty("pass_fail").GetString(), Is.EqualTo("PASS"), $"{stack} {scenario}");
                Assert.That(summary.RootElement.GetProperty("stack").GetString(), Is.EqualTo(stack));
                Assert.That(File.ReadAllText(paths.Stdout), Does.StartWith("RESULT scenario=" + scenario));
            }

            Assert.That(TimeseriesPoint.ReadAll(RunPaths.For(outDir, stack, "s2").TimeseriesCsv), Is.Not.Empty,
                $"{stack} s2 wrote no per-second row");
        }

        // limit_echo writes its CSV and JSON itself: they must name the fields exactly as the tool does.
        RunPaths c = RunPaths.For(outDir, "c-epoll", "s2"), n = RunPaths.For(outDir, "netzlink", "s2");
        Assert.That(File.ReadLines(c.MetricsCsv).First(), Is.EqualTo(MetricsCsvFile.Header));
        Assert.That(PropertyNames(c.SummaryJson), Is.EqualTo(PropertyNames(n.SummaryJson)));
        Assert.That(File.ReadAllText(c.Stdout).Split(' ').Select(f => f.Split('=')[0]),
            Is.EqualTo(File.ReadAllText(n.Stdout).Split(' ').Select(f => f.Split('=')[0])), "RESULT/METRIC field names");

        string md = await File.ReadAllTextAsync(Path.Combine(outDir, "report.md"), cancellationToken);
        string html = await File.ReadAllTextAsync(Path.Combine(outDir, "report.html"), cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(md, Does.Contain("| c-epoll | s2 | 20 | 1024 | 30 | 20 |"));
            Assert.That(md, Does.Contain("None: every run PASSed."));
            Assert.That(html, Does.Contain("<svg ").And.Not.Contain("http"));
            Assert.That(log, Does.Contain("compare: run 6/6: c-epoll s2"));
            Assert.That(stdout.ToString(), Does.Contain("RATIOS scenario=s2 netzlink/dotnet_throughput="));
        });
    }

    private static string[] PropertyNames(string path)
    {
        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(path));
        return json.RootElement.EnumerateObject().Select(p => p.Name).ToArray();
    }
}
