// compare's command line parsed as the tests give it: at one fixed clock (the time the default
// --out folder is named after), as options when it is good or as the whole outcome.
namespace NetZlink.Stress.Tests.Support;

internal static class CompareLines
{
    /// <summary>The clock compare sees: its default --out folder is compare-results/20261122-083000.</summary>
    private static readonly DateTime Now = new(2026, 11, 22, 8, 30, 0, DateTimeKind.Utc);

    /// <summary>What compare's parser made of <paramref name="args"/> at <see cref="Now"/>.</summary>
    public static VerbParseOutcome<CompareOptions> ParseCompareOutcome(params string[] args) => CompareCommandLine.Parse(args, Now);

    /// <summary>The options of a good compare line (null when it was refused).</summary>
    public static CompareOptions ParseCompareOptions(params string[] args) => ParseCompareOutcome(args).Options!;
}
