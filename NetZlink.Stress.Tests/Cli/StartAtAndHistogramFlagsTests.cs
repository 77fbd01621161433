// --start-at and --json-histogram: what they map onto, and every value or combination refused with
// one line that says why (a time far past or ahead, a role or scenario it cannot hold back).

namespace NetZlink.Stress.Tests.Cli;

[TestFixture]
public sealed class StartAtAndHistogramFlagsTests
{
    private static string Now(double offsetSeconds) =>
        (DateTimeOffset.UtcNow.ToUnixTimeSeconds() + offsetSeconds).ToString(CultureInfo.InvariantCulture);

    [Test]
    [CancelAfter(10_000)]
    public void BothMapOntoTheInvocation()
    {
        string startAt = Now(30);

        StressInvocation? invocation = CommandLineParsing.Parse(
            ["--role", "client", "--start-at", startAt, "--json-histogram", "--summary-json", "s.json"]).Invocation;

        Assert.That(invocation, Is.Not.Null);
        Assert.Multiple(() =>
        {
            Assert.That(invocation!.Settings.StartAt, Is.EqualTo(double.Parse(startAt, CultureInfo.InvariantCulture)));
            Assert.That(invocation.JsonHistogram, Is.True);
            Assert.That(CommandLineParsing.Parse([]).Invocation!.Settings.StartAt, Is.Null);
            Assert.That(CommandLineParsing.Parse([]).Invocation!.JsonHistogram, Is.False);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AFewMinutesPastIsALateHostNotAMistake()
    {
        // Refused only beyond 10 minutes; the run itself warns and starts at once.
        Assert.That(CommandLineParsing.Parse(["--scenario", "s0", "--start-at", Now(-120)]).Errors, Is.Empty);
    }

    [TestCase("--role server --start-at {now+30}", "--start-at times a client's start and --role server runs none (give it to every --role client)")]
    [TestCase("--scenario s1 --start-at {now+30}", "--start-at lines up the measured phases of s0/s2 runs and s1 has none (it only connects)")]
    [TestCase("--scenario s3 --start-at {now+30}", "--start-at holds back one run and s3 is a sweep of several (use s0 or s2)")]
    [TestCase("--start-at 0", "--start-at must be a time in Unix seconds such as $(( $(date +%s) + 30 )) (got 0)")]
    [TestCase("--start-at -5", "--start-at must be a time in Unix seconds such as $(( $(date +%s) + 30 )) (got -5)")]
    [TestCase("--start-at soon", "--start-at must be a number (got 'soon')")]
    [TestCase("--start-at {now-3600}", "s ago (more than 600 s): give a time ahead such as $(( $(date +%s) + 30 ))")]
    [TestCase("--start-at {ms}", "hours ahead (more than 24 allowed): it takes Unix seconds as `date +%s` prints them, not milliseconds")]
    [TestCase("--json-histogram", "--json-histogram adds the latency histogram to the --summary-json file: give --summary-json PATH too")]
    [CancelAfter(10_000)]
    public void BadUseIsOneLine(string commandLine, string error)
    {
        string[] args = commandLine
            .Replace("{now+30}", Now(30), StringComparison.Ordinal)
            .Replace("{now-3600}", Now(-3600), StringComparison.Ordinal)
            .Replace("{ms}", (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()).ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal)
            .Split(' ');

        VerbOutcomes.AssertUsageError(args, Has.Count.EqualTo(1), Has.Some.Contains(error));
    }
}
