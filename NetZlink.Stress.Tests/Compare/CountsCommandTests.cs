// The counts verb: limit_echo's COUNTS line from a file or standard input, judged and reported as a
// run reports its own (lines, CSV, JSON with its .hgrm), with the run's exit codes.

namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed class CountsCommandTests
{
    [Test]
    [CancelAfter(10_000)]
    public void ALineOnStandardInputIsJudgedAndWrittenLikeARun()
    {
        using var temp = new TempDirectory();
        string json = temp.File("limit.json"), csv = temp.File("limit.csv");

        (int code, string stdout, string stderr) = Counts("[  1.0s] phase=measure\n" + LimitEchoCountsTests.Pass + "\n",
            "--summary-json", json, "--metrics-csv", csv, "--scenario-id", "limit-s2");

        string result = Line(stdout, "RESULT ");
        using JsonDocument written = JsonDocument.Parse(File.ReadAllText(json));
        Assert.Multiple(() =>
        {
            Assert.That(code, Is.Zero, stderr);
            Assert.That(Field(result, "stack"), Is.EqualTo("c-epoll"));
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"));
            Assert.That(Field(result, "throughput"), Is.EqualTo("2316460.00"));
            Assert.That(Field(Line(stdout, "METRIC "), "scenario_id"), Is.EqualTo("limit-s2"));
            Assert.That(File.ReadAllLines(csv)[0], Is.EqualTo(MetricsCsvFile.Header));
            Assert.That(written.RootElement.GetProperty("p99_us").GetDouble(), Is.Positive);
            Assert.That(Histograms.FromSummary(written.RootElement).TotalCount, Is.EqualTo(6));
            Assert.That(File.Exists(temp.File("limit.hgrm")), Is.True);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AFailingLineExitsTwoAndAFileWithoutOneExitsOne()
    {
        using var temp = new TempDirectory();
        string failing = temp.File("failing.txt"), empty = temp.File("empty.txt");
        File.WriteAllText(failing, LimitEchoCountsTests.Pass.Replace(" peer_closed=0 ", " peer_closed=2 ", StringComparison.Ordinal));
        File.WriteAllText(empty, "READY port=1\n");

        (int failCode, string failOut, _) = Counts(string.Empty, failing);
        (int noneCode, string noneOut, string noneErr) = Counts(string.Empty, empty);
        (int twoCode, _, string twoErr) = Counts(string.Empty, failing, empty);

        Assert.Multiple(() =>
        {
            Assert.That(failCode, Is.EqualTo(2));
            Assert.That(Field(Line(failOut, "RESULT "), "fail_reason"), Is.EqualTo("server_closed"));
            Assert.That(noneCode, Is.EqualTo(1));
            Assert.That(noneOut, Is.Empty);
            Assert.That(noneErr.Trim(), Is.EqualTo($"error: {empty} has no COUNTS line (limit_echo's client prints one when its run ends)"));
            Assert.That(twoCode, Is.EqualTo(1));
            Assert.That(twoErr, Does.Contain("counts takes at most 1 file (got 2: "));
        });
    }

    private static (int Code, string Stdout, string Stderr) Counts(string stdin, params string[] args)
    {
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        int code = CountsCommand.Run(args, new StringReader(stdin), stdout, stderr);
        return (code, stdout.ToString(), stderr.ToString());
    }
}
