// --stack, --client-stack and --server-stack: parsing, defaults, what reaches the server child,
// the stack= label and default scenario id, and what the dotnet stack skips.

namespace NetZlink.Stress.Tests.DotnetStack;

[TestFixture]
public sealed class StackFlagsTests
{
    [Test]
    [CancelAfter(10_000)]
    public void WithoutStackFlagsBothEndsAreNetzlink()
    {
        ScenarioSettings settings = Parse().Settings;

        Assert.Multiple(() =>
        {
            Assert.That(settings.ClientStack, Is.EqualTo("netzlink"));
            Assert.That(settings.ServerStack, Is.EqualTo("netzlink"));
            Assert.That(settings.StackLabel, Is.EqualTo("netzlink"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void StackSetsBothEnds()
    {
        ScenarioSettings settings = Parse("--stack", "dotnet").Settings;

        Assert.Multiple(() =>
        {
            Assert.That(settings.ClientStack, Is.EqualTo("dotnet"));
            Assert.That(settings.ServerStack, Is.EqualTo("dotnet"));
            Assert.That(ResultSchema.ScenarioId(new ScenarioResult { Settings = settings with { Scenario = "s2" } }), Is.EqualTo("dotnet-s2"));
        });
    }

    [TestCase(new[] { "--client-stack", "dotnet" }, "dotnet", "netzlink", "dotnet+netzlink")]
    [TestCase(new[] { "--server-stack", "dotnet" }, "netzlink", "dotnet", "netzlink+dotnet")]
    [TestCase(new[] { "--stack", "dotnet", "--server-stack", "netzlink" }, "dotnet", "netzlink", "dotnet+netzlink")]
    [TestCase(new[] { "--stack", "dotnet", "--client-stack", "netzlink" }, "netzlink", "dotnet", "netzlink+dotnet")]
    [TestCase(new[] { "--stack=DOTNET" }, "dotnet", "dotnet", "dotnet")]
    [CancelAfter(10_000)]
    public void EachEndCanBeChosenAndTheLabelNamesClientThenServer(string[] args, string client, string server, string label)
    {
        ScenarioSettings settings = Parse(args).Settings;

        Assert.Multiple(() =>
        {
            Assert.That(settings.ClientStack, Is.EqualTo(client));
            Assert.That(settings.ServerStack, Is.EqualTo(server));
            Assert.That(settings.StackLabel, Is.EqualTo(label));
            Assert.That(new ScenarioResult { Settings = settings }.Stack, Is.EqualTo(label));
        });
    }

    [TestCase(new[] { "--stack", "asio" }, "--stack")]
    [TestCase(new[] { "--client-stack", "zlink" }, "--client-stack")]
    [TestCase(new[] { "--server-stack", "" }, "--server-stack")]
    [CancelAfter(10_000)]
    public void AnUnknownStackIsAUsageErrorNamingTheFlag(string[] args, string flag)
    {
        VerbOutcomes.AssertUsageError(args, Has.Some.Contains(flag).And.Contains("netzlink, dotnet"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void HelpListsTheStackFlags()
    {
        string? help = CommandLineParsing.Parse(["--help"]).Text;

        Assert.That(help, Does.Contain("--stack ").And.Contain("--client-stack ").And.Contain("--server-stack "));
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheServerChildGetsTheServerStack()
    {
        IReadOnlyList<string> args = ServerLaunch.Arguments(Parse("--client-stack", "netzlink", "--server-stack", "dotnet").Settings, quiet: true);

        int at = args.ToList().IndexOf("--server-stack");
        Assert.That(at, Is.GreaterThanOrEqualTo(0), string.Join(' ', args));
        Assert.That(args[at + 1], Is.EqualTo("dotnet"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void OnTheDotnetStackS4RunsEveryTransportWhateverTheLibraryHas()
    {
        // The native library's transports do not matter when neither end is netzlink.
        IReadOnlyList<PlannedRun> runs = SweepPlan.For(Parse("--scenario", "s4", "--stack", "dotnet"), t => t == "tcp");

        Assert.Multiple(() =>
        {
            Assert.That(runs.Select(r => r.Settings.Transport).Distinct(), Is.EqualTo(new[] { "tcp", "tls", "ws", "wss" }));
            Assert.That(runs.Select(r => r.SkipReason), Has.Exactly(12).Null);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void AMixedPairSkipsOnlyWhatItsNetzlinkEndLacks()
    {
        // A library with tcp and tls only: the netzlink end of a mixed pair cannot run ws or wss.
        IReadOnlyList<PlannedRun> dotnetClient = SweepPlan.For(Parse("--scenario", "s4", "--client-stack", "dotnet"), t => t is "tcp" or "tls");
        IReadOnlyList<PlannedRun> dotnetServer = SweepPlan.For(Parse("--scenario", "s4", "--server-stack", "dotnet"), t => t is "tcp" or "tls");

        Assert.Multiple(() =>
        {
            foreach (IReadOnlyList<PlannedRun> runs in new[] { dotnetClient, dotnetServer })
            {
                Assert.That(runs.Where(r => r.Settings.Transport is "tcp" or "tls").Select(r => r.SkipReason), Has.Exactly(6).Null);
                foreach (PlannedRun run in runs.Where(r => r.Settings.Transport is "ws" or "wss"))
                {
                    Assert.That(run.SkipReason, Is.EqualTo($"transport {run.Settings.Transport} is not available in this native library"));
                }
            }
        });
    }

    private static StressInvocation Parse(params string[] args)
    {
        ParseOutcome outcome = CommandLineParsing.Parse(args);
        Assert.That(outcome.Invocation, Is.Not.Null, string.Join("; ", outcome.Errors));
        return outcome.Invocation!;
    }
}
