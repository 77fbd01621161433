// The wiring in-process, with a stand-in for the scenario logic (role client, so no server child):
// what is printed and written per run, and which exit code every outcome gives.

namespace NetZlink.Stress.Tests.Hosting;

[TestFixture]
public sealed class StressAppTests
{
    private readonly List<ScenarioSettings> _calls = [];
    private StringWriter _stdout = null!;
    private StringWriter _stderr = null!;

    [SetUp]
    public void SetUp()
    {
        _calls.Clear();
        _stdout = new StringWriter();
        _stderr = new StringWriter();
    }

    [TearDown]
    public void TearDown()
    {
        _stdout.Dispose();
        _stderr.Dispose();
    }

    [TestCase("--no-such-flag")]
    [TestCase("--ccu", "0")]
    [TestCase("--size", "8")]
    [CancelAfter(10_000)]
    public async Task BadInputExitsOneWithOneErrorLine(params string[] args)
    {
        int exitCode = await RunAsync(Passing, args);

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Usage));
            Assert.That(Lines(_stderr), Has.Length.EqualTo(1));
            Assert.That(_stderr.ToString(), Does.StartWith("error: ").And.Contain(args[0]));
            Assert.That(_stdout.ToString(), Is.Empty);
            Assert.That(_calls, Is.Empty);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task AMissingTransportIsSkippedWithoutRunningAnything()
    {
        int exitCode = await RunAsync(Passing, "--transport", "tls", "--scenario", "s1");

        string[] lines = Lines(_stdout);
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass));
            Assert.That(_calls, Is.Empty);
            Assert.That(lines, Has.Length.EqualTo(2));
            Assert.That(lines[0], Does.StartWith("RESULT scenario=s1 transport=tls ").And.Contain(" pass_fail=SKIP ")
                .And.EndWith("reason=\"transport tls is not available in this native library\""));
            Assert.That(lines[1], Does.StartWith("METRIC scenario_id=netzlink-s1 transport=tls ").And.Contain(" pass_fail=SKIP "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task APassingRunPrintsItsLinesAndWritesCsvAndJson()
    {
        using var temp = new TempDirectory();
        string csv = temp.File("m.csv");
        string json = temp.File("s.json");

        int exitCode = await RunAsync(Passing, "--role", "client", "--scenario", "s1", "--ccu", "3", "--metrics-csv", csv, "--summary-json", json, "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass));
            Assert.That(_calls.Single(), Is.EqualTo(new ScenarioSettings { Scenario = "s1", Ccu = 3 }));
            Assert.That(Lines(_stdout), Has.Length.EqualTo(2));
            Assert.That(Lines(_stdout)[0], Does.StartWith("RESULT scenario=s1 ").And.Contain(" pass_fail=PASS "));
            Assert.That(File.ReadAllLines(csv), Has.Length.EqualTo(2));
            Assert.That(File.ReadAllLines(csv)[0], Is.EqualTo(MetricsCsvFile.Header));
            Assert.That(File.ReadAllLines(csv)[1], Does.StartWith("netzlink-s1,tcp,3,"));
            Assert.That(_stderr.ToString(), Is.Empty);
        });
        using JsonDocument summary = JsonDocument.Parse(File.ReadAllText(json));
        Assert.That(summary.RootElement.GetProperty("scenario_id").GetString(), Is.EqualTo("netzlink-s1"));
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task ProgressGoesToStderrUnlessQuiet()
    {
        ClientRun reporting = (settings, progress, _) =>
        {
            progress?.Report(new ProgressSnapshot("measure", 3, 10, 10, 6, 55.5));
            return Passing(settings, progress, CancellationToken.None);
        };

        await RunAsync(reporting, "--role", "client");
        string loud = _stderr.ToString();
        _stderr.GetStringBuilder().Clear();
        await RunAsync(reporting, "--role", "client", "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(loud, Does.Contain("] phase=measure conns=3 sent/s=10 recv/s=10 inflight=6 p99_us=55.5"));
            Assert.That(_stderr.ToString(), Is.Empty);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task S3RunsFifteenTimesAndWritesFifteenRowsAndAJsonArray()
    {
        using var temp = new TempDirectory();
        string csv = temp.File("m.csv");
        string json = temp.File("s.json");

        int exitCode = await RunAsync(Passing, "--role", "client", "--scenario", "s3", "--metrics-csv", csv, "--summary-json", json, "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass));
            Assert.That(_calls, Has.Count.EqualTo(15));
            Assert.That(Lines(_stdout).Count(l => l.StartsWith("RESULT ", StringComparison.Ordinal)), Is.EqualTo(15));
            Assert.That(Lines(_stdout).Count(l => l.StartsWith("METRIC ", StringComparison.Ordinal)), Is.EqualTo(15));
            Assert.That(File.ReadAllLines(csv), Has.Length.EqualTo(16));
            Assert.That(File.ReadAllLines(csv)[1], Does.StartWith("s3-backlog-8192,"));
        });
        using JsonDocument summary = JsonDocument.Parse(File.ReadAllText(json));
        Assert.That(summary.RootElement.GetArrayLength(), Is.EqualTo(15));
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task S4RunsTcpAndSkipsTheRest()
    {
        int exitCode = await RunAsync(Passing, "--role", "client", "--scenario", "s4", "--quiet");

        string[] results = Lines(_stdout).Where(l => l.StartsWith("RESULT ", StringComparison.Ordinal)).ToArray();
        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass));
            Assert.That(_calls.Select(c => (c.Transport, c.Scenario)), Is.EqualTo(new[] { ("tcp", "s0"), ("tcp", "s1"), ("tcp", "s2") }));
            Assert.That(results, Has.Length.EqualTo(12));
            Assert.That(results.Count(l => l.Contains(" pass_fail=SKIP ", StringComparison.Ordinal)), Is.EqualTo(9));
            Assert.That(results.Where(l => l.Contains(" pass_fail=SKIP ", StringComparison.Ordinal)), Has.None.Contains(" transport=tcp "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task AFailingRunExitsTwoAndASweepGoesOn()
    {
        ClientRun failFirst = (settings, _, _) =>
        {
            _calls.Add(settings);
            return Task.FromResult(new ScenarioResult
            {
                Settings = settings,
                PassFail = _calls.Count == 1 ? "FAIL" : "PASS",
                Reason = _calls.Count == 1 ? "connect_fail=5" : null,
            });
        };

        int exitCode = await RunAsync(failFirst, "--role", "client", "--scenario", "s3", "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure));
            Assert.That(_calls, Has.Count.EqualTo(15));
            Assert.That(Lines(_stdout)[0], Does.Contain(" pass_fail=FAIL ").And.EndWith("reason=\"connect_fail=5\""));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task AnInterruptedRunIsPrintedMarkedAndEndsTheSweepWithExitTwo()
    {
        using var interrupt = new CancellationTokenSource();
        ClientRun interrupted = (settings, _, _) =>
        {
            _calls.Add(settings);
            interrupt.Cancel();
            return Task.FromResult(new ScenarioResult { Settings = settings, PassFail = "FAIL", Interrupted = true, Reason = "interrupted" });
        };

        int exitCode = await RunAsync(interrupted, interrupt.Token, "--role", "client", "--scenario", "s3", "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure));
            Assert.That(_calls, Has.Count.EqualTo(1));
            Assert.That(Lines(_stdout)[0], Does.Contain(" interrupted=1"));
            Assert.That(_stderr.ToString(), Does.Contain("interrupted: 14 of 15 runs not started"));
        });
    }

    // Settings the runner rejects (ArgumentException) are a usage error, exit 1; an environment
    // failure (any other exception) exit 2; either way one error line, without a stack trace.
    [TestCase(typeof(ArgumentException), "--shards 99 is more than the 64 this machine allows",
        ExitCodes.Usage, "error: --shards 99 is more than the 64 this machine allows")]
    [TestCase(typeof(InvalidOperationException), "only 1024 descriptors:\nraise ulimit -n",
        ExitCodes.Failure, "error: only 1024 descriptors: raise ulimit -n")]
    [CancelAfter(10_000)]
    public async Task ARunnerFailureIsOneErrorLineWithItsExitCode(Type exceptionType, string message, int expectedExitCode, string expectedError)
    {
        ClientRun failing = (_, _, _) => throw (Exception)Activator.CreateInstance(exceptionType, message)!;

        int exitCode = await RunAsync(failing, "--role", "client", "--quiet");

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(expectedExitCode));
            Assert.That(_stderr.ToString(), Is.EqualTo(expectedError + Environment.NewLine));
            Assert.That(_stderr.ToString(), Does.Not.Contain("   at "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task AnUnwritableCsvPathFailsBeforeTheRun()
    {
        using var temp = new TempDirectory();
        string blocker = temp.File("file");
        await File.WriteAllTextAsync(blocker, "not a folder");

        int exitCode = await RunAsync(Passing, "--role", "client", "--quiet", "--metrics-csv", Path.Combine(blocker, "m.csv"));

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Failure));
            Assert.That(_calls, Is.Empty);
            Assert.That(_stderr.ToString(), Does.StartWith("error: --metrics-csv "));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public async Task HelpGoesToStdoutWithExitZero()
    {
        int exitCode = await RunAsync(Passing, "--help");

        Assert.That(exitCode, Is.EqualTo(ExitCodes.Pass));
        Assert.That(_stdout.ToString(), Does.Contain("--metrics-csv"));
    }

    private Task<ScenarioResult> Passing(ScenarioSettings settings, IProgress<ProgressSnapshot>? progress, CancellationToken cancellationToken)
    {
        _calls.Add(settings);
        return Task.FromResult(new ScenarioResult { Settings = settings, PassFail = "PASS", ConnectSuccess = settings.Ccu });
    }

    private Task<int> RunAsync(ClientRun runClient, params string[] args) => RunAsync(runClient, CancellationToken.None, args);

    private Task<int> RunAsync(ClientRun runClient, CancellationToken cancellationToken, params string[] args) =>
        new StressApp(_stdout, _stderr, runClient, transportAvailable: t => t == "tcp").RunAsync(args, cancellationToken);

    private static string[] Lines(StringWriter writer) =>
        writer.ToString().Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries);
}
