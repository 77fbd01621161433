// --rate (open-model s2): how it parses, what it refuses with which message, and the runner's own
// check for callers that skip the CLI.

namespace NetZlink.Stress.Tests.Cli;

[TestFixture]
public sealed class RateOptionTests
{
    [Test]
    [CancelAfter(10_000)]
    public void RateIsPacketsPerSecondAndZeroByDefault()
    {
        ParseOutcome paced = CommandLineParsing.Parse(["--rate", "2000.5"]);
        ParseOutcome closed = CommandLineParsing.Parse([]);

        Assert.Multiple(() =>
        {
            Assert.That(paced.Invocation?.Settings.Rate, Is.EqualTo(2000.5), string.Join("; ", paced.Errors));
            Assert.That(closed.Invocation?.Settings.Rate, Is.Zero);
            Assert.That(CommandLineParsing.Parse(["--rate=0"]).Invocation?.Settings.Rate, Is.Zero, "0 asks for the closed loop");
        });
    }

    [TestCase("s2")]
    [TestCase("s3")]
    [CancelAfter(10_000)]
    public void RateGoesWithS2AndItsSweeps(string scenario)
    {
        ParseOutcome outcome = CommandLineParsing.Parse(["--scenario", scenario, "--rate", "100"]);

        Assert.That(outcome.Invocation?.Settings.Rate, Is.EqualTo(100), string.Join("; ", outcome.Errors));
    }

    [TestCase(new[] { "--rate", "-5" }, "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got -5)")]
    [TestCase(new[] { "--rate", "NaN" }, "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got NaN)")]
    [TestCase(new[] { "--rate", "Infinity" }, "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got Infinity)")]
    [TestCase(new[] { "--rate", "fast" }, "--rate must be a number: 0 (closed loop) or 0.001..1000000000 packets per second (got 'fast')")]
    [TestCase(new[] { "--rate" }, "--rate needs a value")]
    [TestCase(new[] { "--rate", "100", "--scenario", "s1" }, "--rate paces the s2 load (and s3's runs of it); --scenario s1 has no load to pace")]
    [TestCase(new[] { "--rate", "100", "--scenario", "s0" }, "--rate paces the s2 load (and s3's runs of it); --scenario s0 has no load to pace")]
    [TestCase(new[] { "--rate", "100", "--scenario", "s4" }, "--rate paces the s2 load (and s3's runs of it); --scenario s4 has no load to pace")]
    [CancelAfter(10_000)]
    public void BadRatesAreUsageErrorsSayingWhy(string[] args, string error)
    {
        VerbOutcomes.AssertUsageError(args, Is.EqualTo(new[] { error }));
    }

    [TestCase("s0", 100.0)]
    [TestCase("s1", 100.0)]
    [TestCase("s2", -1.0)]
    [CancelAfter(10_000)]
    public void TheRunnerRefusesWhatTheCliWould(string scenario, double rate)
    {
        var settings = new ScenarioSettings { Scenario = scenario, Rate = rate, Ccu = 1 };

        ArgumentException? e = Assert.ThrowsAsync<ArgumentException>(() => ScenarioRunner.RunClientAsync(settings, null, CancellationToken.None));

        Assert.That(e!.Message, Does.StartWith("--rate "));
    }

    [Test]
    [CancelAfter(10_000)]
    public void ARateSplitOverProcessesBelowTheMinimumIsRefusedUpFront()
    {
        ParseOutcome tooThin = CommandLineParsing.Parse(["--rate", "0.003", "--processes", "4", "--ccu", "8"]);
        ParseOutcome enough = CommandLineParsing.Parse(["--rate", "0.004", "--processes", "4", "--ccu", "8"]);

        Assert.Multiple(() =>
        {
            Assert.That(tooThin.Invocation, Is.Null);
            Assert.That(tooThin.ExitCode, Is.EqualTo(ExitCodes.Usage));
            Assert.That(tooThin.Errors, Is.EqualTo(new[]
            {
                "--rate 0.003 split over --processes 4 leaves a client process 0.00075 packets per second, below the minimum of 0.001: raise --rate or lower --processes",
            }));
            Assert.That(enough.Errors, Is.Empty, "0.001 each is the minimum itself");
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void HelpDescribesRate()
    {
        string help = CommandLineParsing.Parse(["--help"]).Text!;

        Assert.That(help, Does.Contain("--rate").And.Contain("open model"));
    }
}
