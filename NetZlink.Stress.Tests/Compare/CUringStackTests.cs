// The c-uring stack: limit_echo on its io_uring layer (--io uring on both sides), its COUNTS line
// read as a c-uring row (io=uring), a line that ran on epoll after all refused as a c-uring row,
// the probe compare asks before running it, and a skip that the report names with its reason.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class CUringStackTests
{
    private static readonly DateTime Now = new(2026, 11, 23, 17, 0, 0, DateTimeKind.Utc);

    [Test]
    [CancelAfter(10_000)]
    public void BothSidesOfCUringGetIoUringAndCEpollGetsEpoll()
    {
        using var temp = new TempDirectory();
        CompareOptions options = CompareCommandLine.Parse(["--ccu", "4"], Now).Options!;
        (string scenario, ScenarioSettings settings) = options.ClientRun("s2");

        Assert.Multiple(() =>
        {
            foreach ((string stack, string io) in new[] { ("c-uring", "uring"), ("c-epoll", "epoll") })
            {
                var server = StackLaunch.Server(stack, settings, "/bin/limit_echo").ArgumentList;
                var client = StackLaunch.Client(stack, scenario, settings, 1234, RunPaths.For(temp.Path, stack, "s2"), true, "/bin/limit_echo").ArgumentList;
                Assert.That(server[0], Is.EqualTo("server"));
                Assert.That(client[0], Is.EqualTo("client"));
                Assert.That(CompareOpenModelTests.Pair(server, "--io"), Is.EqualTo(io), stack);
                Assert.That(CompareOpenModelTests.Pair(client, "--io"), Is.EqualTo(io), stack);
            }
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void IoNamesTheLimitRowAndALineWithoutOneIsCEpoll()
    {
        string uringLine = LimitEchoCountsTests.Pass.Replace("rate=0 ", "rate=0 io=uring ", StringComparison.Ordinal);
        ScenarioResult uring = LimitEchoCounts.Parse(uringLine);
        ScenarioResult open = LimitEchoCounts.Parse(uringLine, "c-uring-s2-open");
        ScenarioResult epoll = LimitEchoCounts.Parse(uringLine.Replace("io=uring", "io=epoll", StringComparison.Ordinal));

        Assert.Multiple(() =>
        {
            Assert.That(uring.Stack, Is.EqualTo("c-uring"));
            Assert.That(ResultSchema.ScenarioId(uring), Is.EqualTo("c-uring-s2"));
            Assert.That(uring.PassFail, Is.EqualTo("PASS"), uring.Reason);
            Assert.That(ResultSchema.ScenarioId(open), Is.EqualTo("c-uring-s2-open"));
            Assert.That(epoll.Stack, Is.EqualTo("c-epoll"));
            Assert.That(LimitEchoCounts.Parse(LimitEchoCountsTests.Pass).Stack, Is.EqualTo("c-epoll"), "no io=: an epoll line");
        });
        var e = Assert.Throws<InvalidDataException>(() => LimitEchoCounts.Parse(uringLine.Replace("io=uring", "io=kqueue", StringComparison.Ordinal)))!;
        Assert.That(e.Message, Is.EqualTo("limit_echo's COUNTS line: io must be epoll or uring (got \"kqueue\")"));
    }

    [Test]
    [CancelAfter(30_000)]
    public async Task TheProbeAnswersOkOrWhyNot(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        string refusing = Script(temp, "refusing", "echo 'io=uring refused: io_uring_setup: Operation not permitted'; exit 2");
        string silent = Script(temp, "silent", "exit 3");

        Assert.Multiple(async () =>
        {
            Assert.That(await LimitEchoBinary.UringRefusedAsync(refusing, cancellationToken),
                Is.EqualTo("io=uring refused: io_uring_setup: Operation not permitted"));
            Assert.That(await LimitEchoBinary.UringRefusedAsync(silent, cancellationToken),
                Is.EqualTo("limit_echo probe --io uring exited with code 3"));
            Assert.That(await LimitEchoBinary.UringRefusedAsync(Script(temp, "ok", "echo io=uring ok"), cancellationToken), Is.Null);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void ASkippedStackIsANoteInTheReport()
    {
        using var temp = new TempDirectory();
        CompareReport report = SampleCompare.Build(temp) with { Skipped = ["c-uring skipped: io=uring refused: test"] };

        Assert.Multiple(() =>
        {
            Assert.That(MarkdownReport.Render(report), Does.Contain("\nc-uring skipped: io=uring refused: test\n"));
            Assert.That(HtmlReport.Render(report), Does.Contain("c-uring skipped: io=uring refused: test"));
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task ACUringCompareRunsBothSidesOnIoUringOrSaysWhyNot(CancellationToken cancellationToken)
    {
        string limitEcho = LimitEchoBinary.Locate();
        string? refused = await LimitEchoBinary.UringRefusedAsync(limitEcho, cancellationToken);

        using InProcessCompare compare = await InProcessCompare.RunAsync(
            ["--stacks", "c-epoll,c-uring", "--scenarios", "s2", "--ccu", "20", "--warmup", "0", "--measure", "1", "--drain-timeout", "5"],
            cancellationToken);

        string log = compare.Stderr;
        Assert.That(compare.ExitCode, Is.EqualTo(0), log);
        if (refused is not null)
        {
            Assert.That(log, Does.Contain("compare: c-uring skipped: " + refused));
            Assert.That(Directory.Exists(Path.Combine(compare.OutDir, "c-uring")), Is.False);
            return;
        }

        RunPaths paths = RunPaths.For(compare.OutDir, "c-uring", "s2");
        RunSummary summary = RunSummary.Read(paths.SummaryJson);
        string counts = File.ReadAllLines(paths.Stdout).Single(l => l.StartsWith("COUNTS ", StringComparison.Ordinal));
        Assert.Multiple(() =>
        {
            Assert.That(summary.Text("stack"), Is.EqualTo("c-uring"));
            Assert.That(summary.Text("scenario_id"), Is.EqualTo("c-uring-s2"));
            Assert.That(summary.PassFail, Is.EqualTo("PASS"), log);
            Assert.That(counts, Does.Contain(" io=uring ").And.Contain(" lost=0 ").And.Contain(" connected=20 "));
            Assert.That(compare.Stdout, Does.Contain("RATIOS scenario=s2 ").And.Contain("netzlink/c-uring_throughput=n/a"));
            Assert.That(log, Does.Not.Contain("refused"));
        });
    }

    [Test]
    [NonParallelizable] // sets NETZLINK_LIMIT_ECHO for the compare it runs
    [CancelAfter(30_000)]
    public async Task ACompareOfCUringAloneWhereIoUringIsRefusedRunsNothingAndSaysWhy(CancellationToken cancellationToken)
    {
        using var temp = new TempDirectory();
        string refusing = Script(temp, "limit_echo", "echo 'io=uring refused: io_uring_setup: Operation not permitted'; exit 2");
        string? before = Environment.GetEnvironmentVariable(LimitEchoBinary.Variable);
        Environment.SetEnvironmentVariable(LimitEchoBinary.Variable, refusing);
        try
        {
            using var stdout = new StringWriter();
            using var stderr = new StringWriter();
            int exitCode = await CompareCommand.RunAsync(
                ["--out", temp.File("out"), "--stacks", "c-uring", "--scenarios", "s2", "--ccu", "2"], stdout, stderr, cancellationToken);

            Assert.Multiple(() =>
            {
                Assert.That(exitCode, Is.EqualTo(2));
                Assert.That(stderr.ToString(), Does.Contain("compare: c-uring skipped: io=uring refused: io_uring_setup: Operation not permitted")
                    .And.Contain("error: nothing left to run: --stacks named c-uring only"));
                Assert.That(Directory.Exists(temp.File("out")), Is.False, "no run started");
            });
        }
        finally
        {
            Environment.SetEnvironmentVariable(LimitEchoBinary.Variable, before);
        }
    }

    private static string Script(TempDirectory temp, string name, string body)
    {
        string path = temp.File(name);
        File.WriteAllText(path, "#!/bin/sh\n" + body + "\n");
        if (!OperatingSystem.IsWindows())
        {
            // limit_echo is a Linux program; so are these stand-ins
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }

        return path;
    }
}
