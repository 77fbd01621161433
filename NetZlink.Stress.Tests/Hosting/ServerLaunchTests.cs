// The server child's command line: this program again, --role server, the server's flags only.

namespace NetZlink.Stress.Tests.Hosting;

[TestFixture]
public sealed class ServerLaunchTests
{
    [Test]
    [CancelAfter(10_000)]
    public void ArgumentsCarryTheServerFlags()
    {
        var settings = new ScenarioSettings
        {
            BindHost = "0.0.0.0", Port = 27999, Backlog = 8192, Hwm = 300000, SendBuffer = 65536, ReceiveBuffer = 131072, IoThreads = 4,
            Ccu = 77, Scenario = "s1", LatencySampleRate = 5,
        };

        Assert.Multiple(() =>
        {
            Assert.That(ServerLaunch.Arguments(settings, quiet: true), Is.EqualTo(new[]
            {
                "--role", "server", "--exit-on-stdin-eof", "--transport", "tcp", "--bind-host", "0.0.0.0", "--port", "27999", "--backlog", "8192",
                "--hwm", "300000", "--sndbuf", "65536", "--rcvbuf", "131072", "--io-threads", "4", "--server-stack", "netzlink",
                "--latency-sample-rate", "5", "--quiet",
            }));
            Assert.That(ServerLaunch.Arguments(settings, quiet: false), Does.Not.Contain("--quiet"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void OutsideItsOwnExecutableTheChildIsDotnetWithThisDll()
    {
        // The test host is the entry assembly here, so the child must name NetZlink.Stress.dll itself.
        (string fileName, IReadOnlyList<string> prefix) = ServerLaunch.Program();

        Assert.Multiple(() =>
        {
            Assert.That(Path.GetFileNameWithoutExtension(fileName), Is.EqualTo("dotnet"));
            Assert.That(prefix, Has.Count.EqualTo(1));
            Assert.That(Path.GetFileName(prefix[0]), Is.EqualTo("NetZlink.Stress.dll"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void StartInfoPipesEveryStreamAndMarksTheChild()
    {
        var info = ServerLaunch.StartInfo(new ScenarioSettings(), quiet: false);

        Assert.Multiple(() =>
        {
            Assert.That(info.RedirectStandardInput && info.RedirectStandardOutput && info.RedirectStandardError, Is.True);
            Assert.That(info.UseShellExecute, Is.False);
            Assert.That(info.Environment[ShutdownSignals.ChildVariable], Is.EqualTo("1"));
        });
    }

    [TestCase("127.0.0.1", "127.0.0.1")]
    [TestCase("0.0.0.0", "127.0.0.1")]
    [TestCase("::", "::1")]
    [TestCase("10.1.2.3", "10.1.2.3")]
    [CancelAfter(10_000)]
    public void TheClientReachesAWildcardServerOverLoopback(string bindHost, string clientHost)
    {
        Assert.That(PlanRunner.ClientHostFor(bindHost), Is.EqualTo(clientHost));
    }

    [TestCase("127.0.0.1", 27110, "tcp://127.0.0.1:27110")]
    [TestCase("::1", 5, "tcp://[::1]:5")]
    [CancelAfter(10_000)]
    public void EndpointsBracketIpv6(string host, int port, string endpoint)
    {
        Assert.That(ServerHost.Endpoint(host, port), Is.EqualTo(endpoint));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AnOtherBuildNamedByTheVariableIsStartedItself()
    {
        using var temp = new TempDirectory();
        string binary = temp.File("NetZlink.Stress");
        File.WriteAllText(binary, "stand-in");

        (string fileName, IReadOnlyList<string> prefix) = ServerLaunch.Program(binary);
        var missing = Assert.Throws<StressHostException>(() => ServerLaunch.Program(temp.File("nothing-here")))!;

        Assert.Multiple(() =>
        {
            Assert.That(fileName, Is.EqualTo(binary));
            Assert.That(prefix, Is.Empty, "an executable, not dotnet with a dll");
            Assert.That(missing.Message, Does.StartWith($"{ServerLaunch.BinaryVariable}={temp.File("nothing-here")} names no file"));
            Assert.That(ServerLaunch.Program(null).FileName, Is.EqualTo(ServerLaunch.Program(string.Empty).FileName), "unset or empty: this program");
        });
    }
}
