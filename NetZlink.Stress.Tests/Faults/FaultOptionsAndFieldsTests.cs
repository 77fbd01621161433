// The fault flags (--fault, --fault-every, --fault-after: parsing, bad input, the server child's
// command line, which connections are hit) and the fault fields in every output format.
using NetZlink.Stress.Faults;

namespace NetZlink.Stress.Tests.Faults;

[TestFixture]
public sealed class FaultOptionsAndFieldsTests
{
    [Test]
    [CancelAfter(10_000)]
    public void TheFaultFlagsMapOntoTheSettings()
    {
        StressInvocation? invocation = CommandLineParsing.Parse(
            ["--fault", "Wrong-Length", "--fault-every", "3", "--fault-after", "0.5"]).Invocation;

        Assert.That(invocation, Is.Not.Null);
        Assert.Multiple(() =>
        {
            Assert.That(invocation!.Settings.Fault, Is.EqualTo(FaultMode.WrongLength));
            Assert.That(invocation.Settings.FaultEvery, Is.EqualTo(3));
            Assert.That(invocation.Settings.FaultAfterSeconds, Is.EqualTo(0.5));
            Assert.That(CommandLineParsing.Parse([]).Invocation!.Settings.Fault, Is.EqualTo(FaultMode.None));
        });
    }

    [TestCase(new[] { "--fault", "explode" }, "--fault must be one of none, silent, garbage, wrong-length, close-mid-packet, slow, crash, stall (got 'explode')")]
    [TestCase(new[] { "--role", "client", "--fault", "silent" }, "--fault silent makes the built-in server misbehave, and --role client runs none (use --role both or server)")]
    [TestCase(new[] { "--transport", "ws", "--fault", "crash" }, "--fault crash runs the fault server, which speaks tcp only: not --transport ws")]
    [TestCase(new[] { "--role", "server", "--transport", "wss", "--fault", "slow", "--tls-cert", "/dev/null" }, "--fault slow runs the fault server, which speaks tcp only: not --transport wss")]
    [TestCase(new[] { "--fault-every", "0" }, "--fault-every must be 1..1000000 (1 = every connection) (got 0)")]
    [TestCase(new[] { "--fault-after", "-1" }, "--fault-after must be 0..3600 seconds (got -1)")]
    [CancelAfter(10_000)]
    public void BadFaultFlagsAreUsageErrorsNamingTheFlag(string[] args, string message)
    {
        ParseOutcome outcome = CommandLineParsing.Parse(args);

        Assert.Multiple(() =>
        {
            Assert.That(outcome.ExitCode, Is.EqualTo(ExitCodes.Usage));
            Assert.That(outcome.Errors, Is.EqualTo(new[] { message }));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheServerChildGetsTheFaultAndThePacketSizeOnlyWhenThereIsAFault()
    {
        var faulty = new ScenarioSettings { Fault = FaultMode.CloseMidPacket, FaultEvery = 4, FaultAfterSeconds = 1.5, Size = 64 };

        IReadOnlyList<string> args = ServerLaunch.Arguments(faulty, quiet: true);
        string joined = string.Join(' ', args);

        Assert.Multiple(() =>
        {
            Assert.That(joined, Does.Contain("--fault close-mid-packet --fault-every 4 --fault-after 1.5 --size 64"));
            Assert.That(ServerLaunch.Arguments(new ScenarioSettings(), quiet: true), Has.None.StartsWith("--fault"));
            // What the parent passes, the child parses back to the same fault.
            Assert.That(CommandLineParsing.Parse(args.ToArray()).Invocation!.Settings.Fault, Is.EqualTo(FaultMode.CloseMidPacket));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void EveryKthAcceptedConnectionIsHitStartingWithTheFirst()
    {
        Assert.Multiple(() =>
        {
            Assert.That(Enumerable.Range(0, 9).Where(i => FaultServer.IsFaulty(i, 4)), Is.EqualTo(new[] { 0, 4, 8 }));
            Assert.That(Enumerable.Range(0, 3).All(i => FaultServer.IsFaulty(i, 1)), Is.True);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheFaultFieldsFollowTheOthersInEveryFormat()
    {
        ScenarioResult result = SampleResults.Fail("1 connections closed on a protocol error");
        result.ProtocolErrors = 2;
        result.Disconnects = 3;
        result.Lost = 17;
        result.FailReason = FailReasons.ProtocolError;
        using var temp = new TempDirectory();
        string json = temp.File("summary.json");
        SummaryJsonFile.Write(json, [result], asArray: false);
        using JsonDocument summary = JsonDocument.Parse(File.ReadAllText(json));
        const string fields = " protocol_errors=2 disconnects=3 lost=17 fail_reason=protocol_error rate=0.00 late=0 ";
        const string reason = " reason=\"1 connections closed on a protocol error\"";

        Assert.Multiple(() =>
        {
            // The cold-start, server and scale fields come after these; the reason is last.
            Assert.That(ResultLines.Result(result), Does.Contain(" interrupted=0" + fields).And.EndWith(reason));
            Assert.That(ResultLines.Metric(result), Does.Contain(" interrupted=0" + fields).And.EndWith(reason));
            Assert.That(MetricsCsvFile.Header, Does.Contain(",interrupted,protocol_errors,disconnects,lost,fail_reason,rate,late,").And.EndWith(",reason"));
            Assert.That(MetricsCsvFile.Row(result), Does.Contain(",2,3,17,protocol_error,"));
            Assert.That(summary.RootElement.GetProperty("protocol_errors").GetInt64(), Is.EqualTo(2));
            Assert.That(summary.RootElement.GetProperty("disconnects").GetInt64(), Is.EqualTo(3));
            Assert.That(summary.RootElement.GetProperty("lost").GetInt64(), Is.EqualTo(17));
            Assert.That(summary.RootElement.GetProperty("fail_reason").GetString(), Is.EqualTo("protocol_error"));
        });
    }
}
