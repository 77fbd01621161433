// `merge`'s command line: its three flags in both spellings, the files, and one line per mistake.

namespace NetZlink.Stress.Tests.Merge;

[TestFixture]
public sealed class MergeCommandLineTests
{
    [Test]
    [CancelAfter(10_000)]
    public void FlagsAndFilesAreRead()
    {
        VerbParseOutcome<MergeOptions> outcome = MergeCommandLine.Parse(
            ["a.json", "--metrics-csv", "m.csv", "--summary-json=s.json", "b.json", "--scenario-id", "lab 2", "--", "--odd-name.json"]);

        Assert.That(outcome.Options, Is.EqualTo(new MergeOptions(outcome.Options!.Inputs, "m.csv", "s.json", "lab 2")));
        Assert.That(outcome.Options.Inputs, Is.EqualTo(new[] { "a.json", "b.json", "--odd-name.json" }));
    }

    [TestCase(new[] { "a.json", "--metrics-csv" }, "--metrics-csv needs a value")]
    [TestCase(new[] { "--summary-json", "--scenario-id", "x", "a.json" }, "--summary-json needs a value")]
    [TestCase(new[] { "--scenario-id=", "a.json" }, "--scenario-id needs a value")]
    [TestCase(new[] { "--ccu", "5", "a.json" }, "merge has no flag --ccu (see merge --help)")]
    [TestCase(new[] { "--scenario-id", "x", "--scenario-id", "y", "a.json" }, "--scenario-id is given more than once")]
    [TestCase(new[] { "a.json", "./a.json" }, "a.json is given 2 times: each host's file counts once")]
    [TestCase(new string[0], "merge needs the --summary-json files of the hosts to merge (see merge --help)")]
    [CancelAfter(10_000)]
    public void MistakesAreOneLineEach(string[] args, string error)
    {
        VerbOutcomes.AssertRefused(MergeCommandLine.Parse(args), Is.EqualTo(new[] { error }));
    }

    [Test]
    [CancelAfter(10_000)]
    public void HelpNamesTheFlagsAndTheExitCodes()
    {
        VerbParseOutcome<MergeOptions> outcome = MergeCommandLine.Parse(["a.json", "--help"]);

        Assert.Multiple(() =>
        {
            Assert.That(outcome.ExitCode, Is.Zero);
            Assert.That(outcome.Text, Does.StartWith("usage: NetZlink.Stress merge [--metrics-csv PATH] [--summary-json PATH] [--scenario-id ID] HOST.json"));
            Assert.That(outcome.Text, Does.Contain("--json-histogram").And.Contain("exit codes: 0 PASS, 1 bad usage or an unusable file, 2 FAIL"));
        });
    }
}
