// Assertions on what a command-line parser returned: a verb's (compare, merge) or the run's own.
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

    /// <summary>
    /// The run's command line <paramref name="args"/> is refused as bad usage: no invocation, the
    /// usage exit code, and errors matching every one of <paramref name="errors"/>.
    /// </summary>
    public static void AssertUsageError(string[] args, params IResolveConstraint[] errors)
    {
        ParseOutcome outcome = CommandLineParsing.Parse(args);
        Assert.Multiple(() =>
        {
            Assert.That(outcome.Invocation, Is.Null);
            Assert.That(outcome.ExitCode, Is.EqualTo(ExitCodes.Usage));
            foreach (IResolveConstraint constraint in errors)
            {
                Assert.That(outcome.Errors, constraint);
            }
        });
    }
}
