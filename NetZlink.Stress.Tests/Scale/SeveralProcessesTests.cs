// A run split over processes for real, at a small size: --processes with --server-processes
// (children connected, told one start, merged), the Kubernetes Indexed Job's own commands from
// deploy/k8s run as local processes (each pod's index from JOB_COMPLETION_INDEX, then the merge
// step), and a run the open-file limit cannot hold, refused before anything connects.
using static NetZlink.Stress.Tests.Support.Histograms;

namespace NetZlink.Stress.Tests.Scale;

public sealed class SeveralProcessesTests : IntegrationFixture
{
    [RequiresStreamClient]
    [Test]
    [CancelAfter(180_000)]
    public async Task ProcessesAndServerProcessesSplitOneRunAndMergeIt(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        string json = temp.File("merged.json");

        using StressProcess run = await StressProcess.RunAsync(cancellationToken,
            "--ccu", "100", "--processes", "3", "--server-processes", "2", "--port", Invariant(FreePort.Consecutive(2)),
            "--shards", "1", "--inflight", "4", "--warmup", "1", "--measure", "1", "--json-histogram", "--summary-json", json);

        Assert.That(run.ExitCode, Is.Zero, run.Stdout + "\n" + run.Stderr);
        string result = Line(run.Stdout, "RESULT ");
        using JsonDocument summary = JsonDocument.Parse(await File.ReadAllTextAsync(json, cancellationToken));
        JsonElement input = summary.RootElement.GetProperty(MergeInputJson.Name);
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Stdout + "\n" + run.Stderr);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Number(result, "ccu"), Is.EqualTo(100));
            Assert.That(Number(result, "connect_success"), Is.EqualTo(100));
            Assert.That(Number(result, "hosts"), Is.EqualTo(3), "one per client process");
            Assert.That(Number(result, "shards"), Is.EqualTo(3));
            Assert.That(Number(result, "lost"), Is.Zero);
            Assert.That(Number(result, "recv"), Is.Positive);
            Assert.That(Decimal(result, "connect_s"), Is.Positive);
            Assert.That(Decimal(result, "connect_rate"), Is.EqualTo(100 / input.GetProperty("connect_s").GetDouble()).Within(0.05));
            Assert.That(Decimal(result, "client_kb_per_conn"), Is.Positive);
            Assert.That(Decimal(result, "server_kb_per_conn"), Is.Positive, "the parent measured its two servers");
            Assert.That(input.GetProperty("server_rss_growth_bytes").GetInt64(), Is.Positive);
            Assert.That(run.Stderr, Does.Contain("3 of 3 client processes connected; they start their warm-up at "));
            Assert.That(run.Stderr, Does.Contain("[client 2] ").And.Contain("phase=measure"), "each child's progress, named");
            Assert.That(run.Stderr, Does.Not.Contain("warning"), "the children measured together");
            Assert.That(Histograms.FromSummary(summary.RootElement).TotalCount, Is.Positive);
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(120_000)]
    public async Task WithStartAtTheChildrenStartOnTheirOwnAndNoHandshakeLineIsPrinted(CancellationToken cancellationToken)
    {
        string startAt = (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0 + 4).ToString("0.000", System.Globalization.CultureInfo.InvariantCulture);
        using StressProcess run = await StressProcess.RunAsync(cancellationToken,
            "--ccu", "20", "--processes", "2", "--port", Invariant(FreePort.Next()), "--start-at", startAt,
            "--shards", "1", "--inflight", "2", "--warmup", "0", "--measure", "1");

        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Stdout + "\n" + run.Stderr);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Number(result, "connect_success"), Is.EqualTo(20));
            // It used to print "0 of 2 client processes connected" as each child ended.
            Assert.That(run.Stderr, Does.Not.Contain("client processes connected"), "no start handshake with --start-at");
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(180_000)]
    public async Task TheIndexedJobsCommandsRunAsLocalProcessesAndMergeExactly(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        using StressProcess server = StressProcess.Start("--role", "server", "--exit-on-stdin-eof", "--port", "0", "--quiet");
        string port = (await server.WaitForReadyPortAsync(cancellationToken)).ToString(CultureInfo.InvariantCulture);
        string startAt = Invariant(DateTimeOffset.UtcNow.ToUnixTimeSeconds() + 8);

        // The pods' arguments as deploy/k8s/client-job.yaml gives them, made small and local.
        var local = new Dictionary<string, string>
        {
            ["netzlink-echo"] = "127.0.0.1", ["27110"] = port, ["50000"] = "100", ["__START_AT__"] = startAt,
            ["3"] = "1", ["10"] = "1",
        };
        string[] clientArgs = [.. Args("client-job.yaml").Select(a => Local(a, local, temp.Path))];
        int shards = int.Parse(clientArgs[Array.IndexOf(clientArgs, "--shard-count") + 1], CultureInfo.InvariantCulture);
        Assert.That(clientArgs, Does.Not.Contain("--shard-index"), "each pod takes its index from the Job");

        var pods = new List<StressProcess>();
        try
        {
            for (int i = 0; i < shards; i++)
            {
                string index = Invariant(i);
                string[] args = [.. clientArgs.Select(a => a.Replace("$(SHARD_INDEX)", index, StringComparison.Ordinal))];
                pods.Add(StressProcess.StartWithEnvironment(new Dictionary<string, string> { [ClientShares.IndexVariable] = index }, args));
            }

            foreach (StressProcess pod in pods)
            {
                await pod.WaitForExitAsync(cancellationToken);
                Assert.That(pod.ExitCode, Is.Zero, pod.Stdout + "\n" + pod.Stderr);
            }

            server.CloseStdin();
            await server.WaitForExitAsync(cancellationToken);

            var hosts = new List<JsonElement>();
            var documents = new List<JsonDocument>();
            for (int i = 0; i < shards; i++)
            {
                documents.Add(JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(temp.Path, $"client-{Invariant(i)}.json"), cancellationToken)));
                hosts.Add(documents[^1].RootElement);
            }

            Assert.That(hosts.Select(h => h.GetProperty("ccu").GetInt32()), Is.EqualTo(Enumerable.Range(0, shards).Select(i => ClientShares.Of(100, shards, i).Count)),
                "pod i ran share i");
            HistogramBase direct = LatencyHistograms.Merge(hosts.Select(Histograms.FromSummary));

            // The merge step as deploy/k8s/merge-job.yaml gives it.
            string[] mergeArgs = [.. Args("merge-job.yaml").Select(a => Local(a, local, temp.Path))];
            using StressProcess merge = await StressProcess.RunAsync(cancellationToken, mergeArgs);
            string result = Line(merge.Stdout, "RESULT ");
            Assert.Multiple(() =>
            {
                Assert.That(merge.ExitCode, Is.Zero, merge.Stdout + "\n" + merge.Stderr);
                Assert.That(merge.Stderr, Does.Not.Contain("warning"), "the pods measured together");
                Assert.That(File.Exists(Path.Combine(temp.Path, "merged.json")), Is.True);
                Assert.That(Number(result, "ccu"), Is.EqualTo(100));
                Assert.That(Number(result, "connect_success"), Is.EqualTo(100));
                Assert.That(Number(result, "hosts"), Is.EqualTo(shards));
                Assert.That(Number(result, "sent"), Is.EqualTo(hosts.Sum(h => h.GetProperty("sent").GetInt64())).And.Positive);
                Assert.That(Field(result, "p99_us"), Is.EqualTo(Us(direct.GetValueAtPercentile(99))));
                Assert.That(Field(result, "max_us"), Is.EqualTo(Us(direct.GetMaxValue())));
                Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
                Assert.That(Decimal(result, "connect_rate"), Is.Positive);
            });
            documents.ForEach(d => d.Dispose());
        }
        finally
        {
            pods.ForEach(p => p.Dispose());
        }
    }

    [Test]
    [CancelAfter(60_000)]
    public async Task ARunTheFileLimitCannotHoldIsRefusedBeforeAnythingStarts(CancellationToken cancellationToken)
    {
        string port = Invariant(FreePort.Next());

        using StressProcess run = await StressProcess.RunUnderShellAsync("ulimit -n 1024", cancellationToken,
            "--ccu", "3000", "--port", port, "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.EqualTo(ExitCodes.Failure), run.Stderr);
            Assert.That(run.Stderr, Does.Contain(
                "error: 3000 connections need 3512 open files in one client process (3000 sockets + 512 reserved), but a process here may open at most 1024 (ulimit -n: soft 1024, hard 1024); use --processes 6 or more (500 connections each)"));
            Assert.That(run.Stderr, Does.Contain("in one echo server process").And.Contain("use --server-processes 6 or more"));
            Assert.That(run.Stdout, Does.Not.Contain("RESULT "));
            Assert.That(StressProcess.ServersOnPort(int.Parse(port, CultureInfo.InvariantCulture)), Is.Empty, "no server was started");
        });
    }

    /// <summary>The quoted items of the first container's args list in deploy/k8s/<paramref name="file"/>.</summary>
    private static string[] Args(string file)
    {
        string[] lines = File.ReadAllLines(Path.Combine(RepositoryRoot.Path, "deploy", "k8s", file));
        int start = Array.FindIndex(lines, l => l.Trim() == "args:");
        Assert.That(start, Is.Not.Negative, $"no args: in {file}");
        return lines.Skip(start + 1).TakeWhile(l => l.TrimStart().StartsWith("- \"", StringComparison.Ordinal))
            .Select(l => Regex.Match(l, "- \"(.*)\"$").Groups[1].Value).ToArray();
    }

    /// <summary>One argument made local: a whole value replaced, /results/ moved into <paramref name="folder"/>.</summary>
    private static string Local(string arg, Dictionary<string, string> values, string folder) =>
        values.TryGetValue(arg, out string? value) ? value : arg.Replace("/results/", folder + "/", StringComparison.Ordinal);

    private static string Invariant(long value) => value.ToString(CultureInfo.InvariantCulture);
}
