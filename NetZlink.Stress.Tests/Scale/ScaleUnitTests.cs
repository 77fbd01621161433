// The pieces of a run split over processes, without starting any: the shares of --ccu, which
// server each connection goes to, the children's command line read back by the parser, and the
// up-front budget of open files and ephemeral ports with the numbers and the flag it names.
namespace NetZlink.Stress.Tests.Scale;

[TestFixture]
public sealed class ScaleUnitTests
{
    [TestCase(50000, 3)]
    [TestCase(100, 4)]
    [TestCase(7, 7)]
    [TestCase(10, 3)]
    public void SharesAddUpToTheTotalDifferByOneAtMostAndFollowEachOther(int total, int count)
    {
        var shares = Enumerable.Range(0, count).Select(i => ClientShares.Of(total, count, i)).ToArray();
        Assert.Multiple(() =>
        {
            Assert.That(shares.Sum(s => s.Count), Is.EqualTo(total));
            Assert.That(shares.Max(s => s.Count) - shares.Min(s => s.Count), Is.LessThanOrEqualTo(1));
            Assert.That(shares.Max(s => s.Count), Is.EqualTo(ClientShares.Largest(total, count)));
            Assert.That(shares[0].Offset, Is.Zero);
            for (int i = 1; i < count; i++)
            {
                Assert.That(shares[i].Offset, Is.EqualTo(shares[i - 1].Offset + shares[i - 1].Count), $"share {i}");
            }
        });
    }

    [Test]
    public void EveryServerGetsAnEqualShareOfAllProcessesConnections()
    {
        string[] servers = ["127.0.0.1:1001", "127.0.0.1:1002", "127.0.0.1:1003"];
        var perServer = new Dictionary<string, int>();
        const int total = 100;
        const int processes = 4;
        for (int i = 0; i < processes; i++)
        {
            (int count, int offset) = ClientShares.Of(total, processes, i);
            string[] endpoints = NetzlinkLoadDriver.Endpoints(new ScenarioSettings { Ccu = count, Servers = servers, ServerOffset = offset });
            for (int j = 0; j < count; j++)
            {
                // The engine sends connection j to endpoint j mod count.
                string endpoint = endpoints[j % endpoints.Length];
                perServer[endpoint] = perServer.GetValueOrDefault(endpoint) + 1;
            }
        }

        Assert.That(perServer, Is.EquivalentTo(new Dictionary<string, int>
        {
            ["tcp://127.0.0.1:1001"] = 34,
            ["tcp://127.0.0.1:1002"] = 33,
            ["tcp://127.0.0.1:1003"] = 33,
        }));
    }

    [Test]
    public void OneServerInServersIsHostAndPort()
    {
        ParseOutcome parsed = CommandLineParsing.Parse(["--role", "client", "--servers", "[::1]:4000", "--stack", "dotnet"]);
        Assert.That(parsed.Errors, Is.Empty);
        ScenarioSettings s = parsed.Invocation!.Settings;
        Assert.Multiple(() =>
        {
            Assert.That(s.Host, Is.EqualTo("::1"));
            Assert.That(s.Port, Is.EqualTo(4000));
            Assert.That(s.Servers, Is.Empty);
        });
    }

    [Test]
    public void AChildsCommandLineReadsBackAsItsShareOfTheSameRun()
    {
        var run = new ScenarioSettings
        {
            Ccu = 50000, Servers = ["127.0.0.1:27110", "127.0.0.1:27111", "127.0.0.1:27112"], Rate = 300000, Inflight = 7,
            WarmupSeconds = 1.5, MeasureSeconds = 4, ScenarioId = "big run", Shards = 1,
        };
        for (int i = 0; i < 3; i++)
        {
            IReadOnlyList<string> args = ClientFanOut.Arguments(run, i, 3, startAt: null, startOnStdin: true, "/tmp/x.json", quiet: true);
            ParseOutcome parsed = CommandLineParsing.Parse(args);
            Assert.That(parsed.Errors, Is.Empty, string.Join(' ', args));
            StressInvocation child = parsed.Invocation!;
            (int count, int offset) = ClientShares.Of(50000, 3, i);
            Assert.Multiple(() =>
            {
                Assert.That(child.Role, Is.EqualTo(StressRole.Client));
                Assert.That(child.Settings.Ccu, Is.EqualTo(count));
                Assert.That(child.Settings.ServerOffset, Is.EqualTo(offset));
                Assert.That(child.Settings.Servers, Is.EqualTo(run.Servers));
                Assert.That(child.Settings.Rate, Is.EqualTo(300000.0 * count / 50000).Within(1e-9), "each paces its share of --rate");
                Assert.That(child.Settings.StartGate, Is.Not.Null);
                Assert.That(child.Settings with { Ccu = run.Ccu, ServerOffset = 0, Rate = run.Rate, StartGate = null, Servers = run.Servers },
                    Is.EqualTo(run with { Scenario = "s2" }), "every other setting as the parent's");
                Assert.That(child.JsonHistogram, Is.True);
                Assert.That(child.SummaryJsonPath, Is.EqualTo("/tmp/x.json"));
            });
        }
    }

    [Test]
    public void TheIndexComesFromTheJobsEnvironmentWhenNotGiven()
    {
        var options = new StressOptions { Role = "client", ShardCount = 4, Ccu = 10 };
        IReadOnlyList<string> errors = OptionsValidator.Validate(options, null, name => name == ClientShares.IndexVariable ? "2" : null);
        Assert.Multiple(() =>
        {
            Assert.That(errors, Is.Empty);
            Assert.That(options.ShardIndex, Is.EqualTo(2));
        });
    }

    [Test]
    public void FilesPerProcessBeyondTheLimitNameBothNumbersAndTheFlag()
    {
        var layout = new ConnectionBudget.Layout(50000, 1, 1, 1, "--processes", "use --server-processes {0} or more");
        IReadOnlyList<string> problems = ConnectionBudget.Problems(layout, 20000, 20000, (32768, 60999));
        Assert.That(problems, Is.EqualTo(new[]
        {
            "50000 connections need 50512 open files in one client process (50000 sockets + 512 reserved), but a process here may open at most 20000 (ulimit -n: soft 20000, hard 20000); use --processes 3 or more (16667 connections each), or raise the hard limit",
            "50000 connections need 50512 open files in one echo server process (50000 sockets + 512 reserved), but a process here may open at most 20000 (ulimit -n: soft 20000, hard 20000); use --server-processes 3 or more (16667 connections each), or raise the hard limit",
            "50000 connections from one source address to one server address and port need 50000 local ports, but the ephemeral port range 32768-60999 (net.ipv4.ip_local_port_range) gives 28232 per (source, destination) pair; use --server-processes 2 or more (25000 connections each)",
        }));
    }

    [Test]
    public void WhatTheSuggestedFlagsGiveFits()
    {
        Assert.Multiple(() =>
        {
            Assert.That(ConnectionBudget.Problems(new(50000, 3, 3, 3, "--processes", "use --server-processes {0} or more"), 20000, 20000, (32768, 60999)), Is.Empty);
            Assert.That(ConnectionBudget.Problems(new(50000, 3, 0, 2, "--processes", "list {0} or more servers with --servers"), 20000, 20000, (32768, 60999)), Is.Empty);
            // A narrow port range: 1000 ports per pair, so 2500 connections need 3 servers.
            Assert.That(ConnectionBudget.Problems(new(2500, 1, 0, 2, "--processes", "list {0} or more servers with --servers"), 20000, 20000, (40000, 40999)),
                Is.EqualTo(new[] { "1250 connections from one source address to one server address and port need 1250 local ports, but the ephemeral port range 40000-40999 (net.ipv4.ip_local_port_range) gives 1000 per (source, destination) pair; list 3 or more servers with --servers (834 connections each)" }));
        });
    }
}
