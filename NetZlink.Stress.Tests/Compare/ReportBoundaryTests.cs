// The report generator's boundary: Reports/ reads result files and writes reports, and runs
// nothing; the compare verb (Compare/) reaches it only through ReportWriter and the records it
// hands over. Checked on the sources, so a file that crosses the line fails here by name.
namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed partial class ReportBoundaryTests
{
    /// <summary>What Reports/ may use besides System: the result schema and the scenario vocabulary.</summary>
    private static readonly string[] AllowedNamespaces = ["NetZlink.Stress.Output", "NetZlink.Stress.Scenarios"];

    /// <summary>Words of code that starts, waits on or runs something.</summary>
    private static readonly string[] Running = ["Process", "Thread", "Task.Run", "Socket", "ScenarioRunner", "StackLaunch", "ClientChildProcess", "LimitEchoBinary", "CompareRunner", "Hosting"];

    /// <summary>The generator's inside, which only Reports/ itself uses.</summary>
    private static readonly string[] Inside = ["HtmlReport", "MarkdownReport", "SvgChart", "ReportTables", "Ratios"];

    [Test]
    public void ReportsUseOnlyTheSchemaAndTheScenarioNames()
    {
        Assert.Multiple(() =>
        {
            foreach ((string file, string code) in Sources("Reports"))
            {
                foreach (Match m in UsingDirective().Matches(code))
                {
                    string ns = m.Groups[1].Value;
                    Assert.That(ns.StartsWith("System", StringComparison.Ordinal) || AllowedNamespaces.Contains(ns), Is.True, $"{file}: using {ns}");
                }

                foreach (string word in Running)
                {
                    Assert.That(Regex.IsMatch(code, $@"\b{Regex.Escape(word)}\b"), Is.False, $"{file} mentions {word}");
                }
            }
        });
    }

    [Test]
    public void TheCompareVerbCallsTheGeneratorThroughReportWriterOnly()
    {
        Assert.Multiple(() =>
        {
            foreach ((string file, string code) in Sources("Compare"))
            {
                foreach (string word in Inside)
                {
                    Assert.That(Regex.IsMatch(code, $@"\b{word}\b"), Is.False, $"{file} uses {word}");
                }
            }
        });
    }

    [Test]
    public void TheCheckSeesTheSources() =>
        Assert.That(Sources("Reports").Select(s => Path.GetFileName(s.File)), Does.Contain("ReportWriter.cs").And.Contain("HtmlReport.cs"));

    /// <summary>The .cs files of NetZlink.Stress/<paramref name="folder"/>, comments taken out.</summary>
    private static IEnumerable<(string File, string Code)> Sources(string folder) =>
        Directory.EnumerateFiles(RepositoryRoot.Combine("NetZlink.Stress", folder), "*.cs")
            .Select(f => (f, Comment().Replace(File.ReadAllText(f), string.Empty)));

    [GeneratedRegex(@"^using ([\w.]+);", RegexOptions.Multiline)]
    private static partial Regex UsingDirective();

    [GeneratedRegex(@"//[^\n]*|/\*.*?\*/", RegexOptions.Singleline)]
    private static partial Regex Comment();
}
