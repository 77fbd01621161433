// The C limit row's COUNTS names against the reader and the result schema: the names limit_echo.c
// prints are LimitEchoCounts.Names, in order; a name that carries a result field's value is that
// field's name exactly; no other name is a near miss of a field's (gating_violations beside
// gating_violation was one); and the reader needs every name it lists.
namespace NetZlink.Stress.Tests.Compare;

[TestFixture]
public sealed partial class LimitEchoNamesTests
{
    /// <summary>A line that reads every name: a drain that timed out (drain_wait, outstanding, unsent are read then).</summary>
    private static readonly string Full = LimitEchoCountsTests.Pass
        .Replace("drain_timeout=0 drain_wait=none outstanding=0 unsent=0", "drain_timeout=1 drain_wait=drain outstanding=3 unsent=2", StringComparison.Ordinal);

    /// <summary>Names alike by spelling only: in_flight is what was outstanding at the end, inflight the cap (--inflight).</summary>
    private static readonly (string Name, string Field)[] Unrelated = [("in_flight", "inflight")];

    [Test]
    public void LimitEchoPrintsExactlyTheNamesTheReaderKnowsInItsOrder()
    {
        string source = File.ReadAllText(RepositoryRoot.Combine("native", "bench", "limit_echo.c"));
        int start = source.IndexOf("static void print_counts(", StringComparison.Ordinal);
        Assert.That(start, Is.GreaterThan(0), "print_counts is in limit_echo.c");
        int end = source.IndexOf("\n}\n", start, StringComparison.Ordinal);
        string body = source[start..end];

        string[] printed = PrintedName().Matches(body).Select(m => m.Groups[1].Success ? m.Groups[1].Value : m.Groups[2].Value).ToArray();

        Assert.That(printed, Is.EqualTo(LimitEchoCounts.Names.Select(n => n.Name).ToArray()));
    }

    [Test]
    public void TheLineAndTheSampleAgreeOnTheNames()
    {
        string[] inSample = LimitEchoCountsTests.Pass.Split(' ').Skip(1).Select(p => p[..p.IndexOf('=', StringComparison.Ordinal)]).ToArray();

        // The sample leaves io= out, as limit_echo builds before it did (the reader takes that as epoll).
        Assert.That(inSample, Is.EqualTo(LimitEchoCounts.Names.Select(n => n.Name).Where(n => n != "io").ToArray()));
    }

    [Test]
    public void ANameThatCarriesAResultFieldIsThatFieldsName()
    {
        string[] fields = ResultSchema.Fields.Select(f => f.Name).ToArray();
        Assert.Multiple(() =>
        {
            foreach ((string name, string? field) in LimitEchoCounts.Names.Where(n => n.Field is not null))
            {
                Assert.That(field, Is.EqualTo(name), $"{name} is spelled as its result field");
                Assert.That(fields, Does.Contain(field), $"{field} is a ResultSchema field");
            }
        });
    }

    [Test]
    public void NoOtherNameIsANearMissOfAResultField()
    {
        string[] fields = ResultSchema.Fields.Select(f => f.Name).ToArray();
        Assert.Multiple(() =>
        {
            foreach ((string name, _) in LimitEchoCounts.Names.Where(n => n.Field is null))
            {
                Assert.That(fields.Where(f => NearMiss(f, name) && !Unrelated.Contains((name, f))), Is.Empty, $"{name} is spelled almost as a result field");
            }
        });
    }

    [Test]
    public void TheNearMissRuleCatchesTheOldSpelling() =>
        Assert.That(NearMiss("gating_violation", "gating_violations"), Is.True);

    [Test]
    public void AFieldValueLandsInItsResultFieldUnchanged()
    {
        // Distinct values for the integer fields the line carries as they are.
        string line = Full;
        var expected = new Dictionary<string, long>();
        long value = 11;
        foreach ((string name, string? field) in LimitEchoCounts.Names)
        {
            if (field is "gating_violation" or "bad_echoes" or "protocol_errors" or "lost" or "late")
            {
                line = Regex.Replace(line, $" {name}=\\d+ ", $" {name}={value} ");
                expected[field] = value++;
            }
        }

        ScenarioResult r = LimitEchoCounts.Parse(line);

        Assert.Multiple(() =>
        {
            foreach ((string field, long v) in expected)
            {
                Assert.That(ResultSchema.Named(field).Read(r).Integer, Is.EqualTo(v), field);
            }
        });
    }

    [Test]
    public void TheReaderNeedsEveryNameButIo()
    {
        Assert.That(() => LimitEchoCounts.Parse(Full), Throws.Nothing);
        Assert.Multiple(() =>
        {
            foreach ((string name, _) in LimitEchoCounts.Names.Where(n => n.Name != "io"))
            {
                string without = Regex.Replace(Full, $" {name}=[^ ]*", string.Empty);
                Assert.That(() => LimitEchoCounts.Parse(without), Throws.TypeOf<InvalidDataException>().With.Message.Contains($"{name}= is missing"), name);
            }
        });
    }

    /// <summary>Alike but for a trailing s or the underscores.</summary>
    private static bool NearMiss(string field, string name) =>
        field != name && (field + "s" == name || name + "s" == field || field.Replace("_", "", StringComparison.Ordinal) == name.Replace("_", "", StringComparison.Ordinal));

    /// <summary>A name=value in the format strings of print_counts, or a histogram's name passed to hist_print.</summary>
    [GeneratedRegex("""([a-z][a-z0-9_]*)=|hist_print\([^,]+,\s*"([a-z0-9_]+)"\)""")]
    private static partial Regex PrintedName();
}
