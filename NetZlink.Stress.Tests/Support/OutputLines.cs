// Reads the tool's RESULT/METRIC lines back: one line by its tag, one field by its name.
namespace NetZlink.Stress.Tests.Support;

internal static class OutputLines
{
    /// <summary>The first line of <paramref name="output"/> starting with <paramref name="prefix"/>; fails the test when there is none.</summary>
    public static string Line(string output, string prefix)
    {
        string? line = output.Split('\n').FirstOrDefault(l => l.StartsWith(prefix, StringComparison.Ordinal));
        Assert.That(line, Is.Not.Null, $"no {prefix.Trim()} line in: {output}");
        return line!;
    }

    /// <summary>The value of name= in <paramref name="line"/> (quoted values keep their quotes).</summary>
    public static string Field(string line, string name)
    {
        Match match = Regex.Match(line, $" {Regex.Escape(name)}=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S*)");
        Assert.That(match.Success, Is.True, $"no {name}= in: {line}");
        return match.Groups[1].Value;
    }

    /// <summary>name= as a whole number.</summary>
    public static long Number(string line, string name) => long.Parse(Field(line, name), CultureInfo.InvariantCulture);

    /// <summary>name= as a decimal number.</summary>
    public static double Decimal(string line, string name) => double.Parse(Field(line, name), CultureInfo.InvariantCulture);
}
