// compare's command line: its own flags, the scenario flags passed through the ordinary parser,
// and the flags compare sets per run refused with the reason.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class CompareCommandLineTests
{
    [Test]
    public void DefaultsAreEveryStackAndScenarioIntoATimestampedFolder()
    {
        CompareOptions options = ParseCompareOptions([]);

        Assert.Multiple(() =>
        {
            Assert.That(options.Stacks, Is.EqualTo(new[] { "netzlink", "dotnet", "c-epoll", "c-uring" }));
            Assert.That(options.Scenarios, Is.EqualTo(new[] { "s0", "s1", "s2" }));
            Assert.That(options.OutDirectory, Is.EqualTo(Path.Combine("compare-results", "20261122-083000")));
            Assert.That(options.Settings.Ccu, Is.EqualTo(10000), "the reference profile");
        });
    }

    [Test]
    public void ScenarioFlagsReachTheSettingsAndListsKeepReportOrder()
    {
        CompareOptions options = ParseCompareOptions(
            ["--out", "x", "--stacks", "c-epoll,netzlink", "--scenarios=s2", "--ccu", "20", "--measure", "1.5", "--quiet"]);

        Assert.Multiple(() =>
        {
            Assert.That(options.OutDirectory, Is.EqualTo("x"));
            Assert.That(options.Stacks, Is.EqualTo(new[] { "netzlink", "c-epoll" }));
            Assert.That(options.Scenarios, Is.EqualTo(new[] { "s2" }));
            Assert.That(options.Settings.Ccu, Is.EqualTo(20));
            Assert.That(options.Settings.MeasureSeconds, Is.EqualTo(1.5));
            Assert.That(options.Quiet, Is.True);
        });
    }

    [TestCase(new[] { "--stacks", "netzlink,zmq" }, "--stacks takes a comma-separated list of netzlink, dotnet, c-epoll, c-uring (got 'netzlink,zmq')")]
    [TestCase(new[] { "--scenarios", "s3" }, "--scenarios takes a comma-separated list of s0, s1, s2 (got 's3')")]
    [TestCase(new[] { "--out" }, "--out needs a value")]
    [TestCase(new[] { "--scenario", "s2" }, "--scenario cannot be given to compare: use --scenarios")]
    [TestCase(new[] { "--metrics-csv", "m.csv" }, "--metrics-csv cannot be given to compare: each run writes DIR/<stack>/<scenario>/metrics.csv")]
    [TestCase(new[] { "--port", "1" }, "--port cannot be given to compare: each server takes a free port")]
    [TestCase(new[] { "--start-at", "1800000000" }, "--start-at cannot be given to compare: compare starts each run as soon as the one before has finished")]
    [TestCase(new[] { "--ccu", "0" }, "--ccu must be 1..1000000 (one descriptor each; a process gets about a million) (got 0)")]
    [TestCase(new[] { "--no-such" }, "unknown flag --no-such (see --help)")]
    public void BadInputIsRefusedWithTheReason(string[] args, string error)
    {
        VerbOutcomes.AssertRefused(ParseCompareOutcome(args), Has.Some.StartsWith(error));
    }

    [Test]
    public void HelpPrintsUsage()
    {
        VerbParseOutcome<CompareOptions> outcome = ParseCompareOutcome(["--ccu", "5", "--help"]);
        Assert.That(outcome.Options, Is.Null);
        Assert.That(outcome.ExitCode, Is.EqualTo(0));
        Assert.That(outcome.Text, Does.StartWith("usage: NetZlink.Stress compare"));
    }
}
