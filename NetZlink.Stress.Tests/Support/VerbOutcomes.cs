// Assertions on what a verb's command-line parser (compare, merge) returned.
using NUnit.Framework.Constraints;

namespace NetZlink.Stress.Tests.Support;

internal static class VerbOutcomes
{
    /// <summary>The line was refused as bad usage: no options, exit code 1, and errors matching <paramref name="errors"/>.</summary>
    public static void AssertRefused<TOptions>(VerbParseOutcome<TOptions> outcome, IResolveConstraint errors)
        where TOptions : class
    {
        Assert.Multiple(() =>
        {
            Assert.That(outcome.Options, Is.Null);
            Assert.That(outcome.ExitCode, Is.EqualTo(1));
            Assert.That(outcome.Errors, errors);
        });
    }
}
