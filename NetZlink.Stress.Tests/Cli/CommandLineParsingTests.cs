// The flags: names, defaults, mapping onto ScenarioSettings, and one clear line per bad input.

namespace NetZlink.Stress.Tests.Cli;

[TestFixture]
public sealed class CommandLineParsingTests
{
    [Test]
    [CancelAfter(10_000)]
    public void NoFlagsGiveTheReferenceProfileAndRoleBoth()
    {
        ParseOutcome outcome = CommandLineParsing.Parse([]);

        Assert.That(outcome.Invocation, Is.Not.Null, string.Join("; ", outcome.Errors));
        StressInvocation invocation = outcome.Invocation!;
        Assert.Multiple(() =>
        {
            // Record equality: every default of the flags is ScenarioSettings' default.
            Assert.That(invocation.Settings, Is.EqualTo(new ScenarioSettings()));
            Assert.That(invocation.Scenario, Is.EqualTo("s2"));
            Assert.That(invocation.Role, Is.EqualTo(StressRole.Both));
            Assert.That(invocation.Quiet, Is.False);
            Assert.That(invocation.MetricsCsvPath, Is.Null);
            Assert.That(invocation.SummaryJsonPath, Is.Null);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void EveryFlagMapsOntoItsSetting()
    {
        string[] args =
        [
            "--scenario", "s1", "--role", "client", "--transport", "tcp", "--bind-host", "0.0.0.0",
            "--host", "10.0.0.2", "--port", "27111", "--ccu", "123", "--size", "64", "--inflight", "7",
            "--warmup", "0.5", "--measure", "2.25", "--drain-timeout", "4", "--connect-concurrency", "64",
            "--connect-timeout", "1.5", "--connect-retries", "0", "--connect-retry-delay-ms", "20",
            "--backlog", "1024", "--hwm", "5000", "--sndbuf", "65536", "--rcvbuf", "131072",
            "--io-threads", "2", "--shards", "3", "--send-batch", "8", "--latency-sample-rate", "0",
            "--scenario-id", "run-7", "--metrics-csv", "out/m.csv", "--summary-json", "out/s.json", "--quiet",
        ];

        StressInvocation? invocation = CommandLineParsing.Parse(args).Invocation;

        Assert.That(invocation, Is.Not.Null);
        Assert.Multiple(() =>
        {
            Assert.That(invocation!.Settings, Is.EqualTo(new ScenarioSettings
            {
                Scenario = "s1",
                ScenarioId = "run-7",
                Transport = "tcp",
                Host = "10.0.0.2",
                BindHost = "0.0.0.0",
                Port = 27111,
                Ccu = 123,
                Size = 64,
                Inflight = 7,
                WarmupSeconds = 0.5,
                MeasureSeconds = 2.25,
                DrainTimeoutSeconds = 4,
                ConnectConcurrency = 64,
                ConnectTimeoutSeconds = 1.5,
                ConnectRetries = 0,
                ConnectRetryDelayMs = 20,
                Backlog = 1024,
                Hwm = 5000,
                SendBuffer = 65536,
                ReceiveBuffer = 131072,
                IoThreads = 2,
                Shards = 3,
                SendBatch = 8,
                LatencySampleRate = 0,
            }));
            Assert.That(invocation.Role, Is.EqualTo(StressRole.Client));
            Assert.That(invocation.MetricsCsvPath, Is.EqualTo("out/m.csv"));
            Assert.That(invocation.SummaryJsonPath, Is.EqualTo("out/s.json"));
            Assert.That(invocation.Quiet, Is.True);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void EqualsSignFormAndUpperCaseValuesAreAccepted()
    {
        StressInvocation? invocation = CommandLineParsing.Parse(["--ccu=50", "--scenario", "S0", "--role=Server", "--port", "0"]).Invocation;

        Assert.That(invocation, Is.Not.Null);
        Assert.Multiple(() =>
        {
            Assert.That(invocation!.Settings.Ccu, Is.EqualTo(50));
            Assert.That(invocation.Scenario, Is.EqualTo("s0"));
            Assert.That(invocation.Settings.Scenario, Is.EqualTo("s0"));
            Assert.That(invocation.Role, Is.EqualTo(StressRole.Server));
        });
    }

    [TestCase("s3")]
    [TestCase("s4")]
    [CancelAfter(10_000)]
    public void SweepScenariosStartFromS2Settings(string scenario)
    {
        StressInvocation? invocation = CommandLineParsing.Parse(["--scenario", scenario]).Invocation;

        Assert.That(invocation, Is.Not.Null);
        Assert.That(invocation!.Scenario, Is.EqualTo(scenario));
        Assert.That(invocation.Settings.Scenario, Is.EqualTo("s2"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void PortZeroIsAllowedForTheServerRole()
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--role", "server", "--port", "0"]);

        Assert.That(outcome.Invocation?.Settings.Port, Is.Zero, string.Join("; ", outcome.Errors));
    }

    [TestCase(new[] { "--no-such-flag" }, "--no-such-flag")]
    [TestCase(new[] { "-x" }, "-x")]
    [TestCase(new[] { "--Ccu", "5" }, "--Ccu")]
    [TestCase(new[] { "stray" }, "stray")]
    [TestCase(new[] { "--ccu", "0" }, "--ccu")]
    [TestCase(new[] { "--ccu", "-3" }, "--ccu")]
    [TestCase(new[] { "--ccu", "many" }, "--ccu")]
    [TestCase(new[] { "--ccu" }, "--ccu")]
    [TestCase(new[] { "--ccu", "--quiet" }, "--ccu")]
    [TestCase(new[] { "--size", "8" }, "--size")]
    [TestCase(new[] { "--inflight", "0" }, "--inflight")]
    [TestCase(new[] { "--port", "0" }, "--port")]
    [TestCase(new[] { "--port", "0", "--role", "client" }, "--port")]
    [TestCase(new[] { "--port", "65536" }, "--port")]
    [TestCase(new[] { "--port", "-1", "--role", "server" }, "--port")]
    [TestCase(new[] { "--warmup", "-1" }, "--warmup")]
    [TestCase(new[] { "--measure", "-0.5" }, "--measure")]
    [TestCase(new[] { "--measure", "NaN" }, "--measure")]
    [TestCase(new[] { "--drain-timeout", "-2" }, "--drain-timeout")]
    [TestCase(new[] { "--connect-timeout", "-1" }, "--connect-timeout")]
    [TestCase(new[] { "--connect-retries", "-1" }, "--connect-retries")]
    [TestCase(new[] { "--scenario", "s9" }, "--scenario")]
    [TestCase(new[] { "--role", "proxy" }, "--role")]
    [TestCase(new[] { "--transport", "udp" }, "--transport")]
    [TestCase(new[] { "--send-batch", "0" }, "--send-batch")]
    [TestCase(new[] { "--connect-concurrency", "0" }, "--connect-concurrency")]
    [TestCase(new[] { "--io-threads", "0" }, "--io-threads")]
    [TestCase(new[] { "--latency-sample-rate", "-1" }, "--latency-sample-rate")]
    [TestCase(new[] { "--ccu", "1", "--ccu", "2" }, "--ccu")]
    [CancelAfter(10_000)]
    public void BadInputIsAUsageErrorNamingTheFlag(string[] args, string named)
    {
        VerbOutcomes.AssertUsageError(args, Has.Some.Contains(named), Has.All.Not.Contains('\n'));
    }

    [Test]
    [CancelAfter(10_000)]
    public void SizeErrorGivesTheRangeAndWhy()
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--size", "8"]);

        Assert.That(outcome.Errors, Is.EqualTo(new[]
        {
            "--size must be 9..16777212 bytes (the body holds the phase byte and an 8-byte timestamp, and with its 4-byte header is at most the engine's 16 MiB packet) (got 8)",
        }));
    }

    [Test]
    [CancelAfter(10_000)]
    public void BadValueErrorQuotesTheValue()
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--measure", "soon"]);

        Assert.That(outcome.Errors, Is.EqualTo(new[] { "--measure must be a number: 0 (no measured phase) or 0.1..604800 seconds (got 'soon')" }));
    }

    [Test]
    [CancelAfter(10_000)]
    public void HelpListsEveryFlagAndExitsZero()
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--help"]);

        Assert.Multiple(() =>
        {
            Assert.That(outcome.Invocation, Is.Null);
            Assert.That(outcome.ExitCode, Is.EqualTo(ExitCodes.Pass));
            foreach (string flag in new[]
            {
                "--scenario", "--role", "--transport", "--bind-host", "--host", "--port", "--ccu", "--size", "--inflight",
                "--warmup", "--measure", "--drain-timeout", "--connect-concurrency", "--connect-timeout",
                "--connect-retries", "--connect-retry-delay-ms", "--backlog", "--hwm", "--sndbuf", "--rcvbuf",
                "--io-threads", "--shards", "--send-batch", "--latency-sample-rate", "--scenario-id",
                "--metrics-csv", "--summary-json", "--quiet", "--version",
            })
            {
                Assert.That(outcome.Text, Does.Contain(flag + " "), flag);
            }
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void VersionPrintsTheVersionAndExitsZero()
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--version"]);

        Assert.That(outcome.ExitCode, Is.EqualTo(ExitCodes.Pass));
        Assert.That(outcome.Text, Does.StartWith("NetZlink.Stress "));
    }
}
