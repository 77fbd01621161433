// The real CLI on the dotnet stack, server in its child process: s0/s1/s2 at ccu 200 PASS, and the
// two stacks interoperate on the wire in both directions (netzlink client ↔ dotnet server and
// dotnet client ↔ netzlink server).

namespace NetZlink.Stress.Tests.DotnetStack;

public sealed class DotnetStackEndToEndTests : IntegrationFixture
{
    [TestCase("s0")]
    [TestCase("s1")]
    [TestCase("s2")]
    [CancelAfter(60_000)]
    public async Task SmallRunsPassOnTheDotnetStack(string scenario, CancellationToken cancellationToken)
    {
        int port = FreePort.Next();

        // s0 is one echo on one connection: it refuses --ccu, --warmup and --measure.
        string[] load = scenario == "s0" ? [] : ["--ccu", "200", "--warmup", "1", "--measure", "2"];
        using StressProcess run = await StressProcess.RunAsync(
            cancellationToken,
            ["--stack", "dotnet", "--scenario", scenario, .. load, "--drain-timeout", "5", "--port", port.ToString(CultureInfo.InvariantCulture), "--quiet"]);

        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), run.Diagnostics);
            Assert.That(Field(result, "stack"), Is.EqualTo("dotnet"));
            Assert.That(Field(Line(run.Stdout, "METRIC "), "scenario_id"), Is.EqualTo("dotnet-" + scenario));
            Assert.That(Field(result, "connect_success"), Is.EqualTo(scenario == "s0" ? "1" : "200"));
            Assert.That(StressProcess.ServersOnPort(port), Is.Empty, "the server child outlived the run");
        });
        if (scenario != "s1")
        {
            Assert.That(Number(result, "recv"), Is.Positive);
            Assert.That(Number(result, "recv"), Is.EqualTo(Number(result, "sent")));
        }

        if (scenario == "s2")
        {
            // What the client's socket callbacks allocated over the measured phase, per packet.
            double alloc = Number(result, "alloc_bytes_per_packet");
            TestContext.Out.WriteLine($"dotnet stack s2 ccu 200: throughput={Field(result, "throughput")} alloc_bytes_per_packet={alloc}");
            Assert.That(alloc, Is.Zero);
        }
    }

    [TestCase("netzlink", "dotnet")]
    [TestCase("dotnet", "netzlink")]
    [CancelAfter(60_000)]
    public async Task EachClientStackPassesAgainstTheOtherServerStack(string client, string server, CancellationToken cancellationToken)
    {
        ClientStacks.Require(client);

        int port = FreePort.Next();

        using StressProcess run = await StressProcess.RunAsync(
            cancellationToken,
            "--client-stack", client, "--server-stack", server, "--scenario", "s2", "--ccu", "200", "--warmup", "1", "--measure", "2",
            "--drain-timeout", "5", "--port", port.ToString(CultureInfo.InvariantCulture), "--quiet");

        string result = Line(run.Stdout, "RESULT ");
        Assert.Multiple(() =>
        {
            Assert.That(run.ExitCode, Is.Zero, run.Diagnostics);
            Assert.That(Field(result, "pass_fail"), Is.EqualTo("PASS"), run.Diagnostics);
            Assert.That(Field(result, "stack"), Is.EqualTo($"{client}+{server}"));
            Assert.That(Field(result, "connect_success"), Is.EqualTo("200"));
            Assert.That(Number(result, "recv"), Is.Positive);
            Assert.That(Field(result, "gating_violation"), Is.EqualTo("0"));
            Assert.That(StressProcess.ServersOnPort(port), Is.Empty, "the server child outlived the run");
        });
    }

    private static double Number(string line, string name) => double.Parse(Field(line, name), CultureInfo.InvariantCulture);

    private static string Line(string output, string prefix) => OutputLines.Line(output, prefix);

    private static string Field(string line, string name) => OutputLines.Field(line, name);
}
