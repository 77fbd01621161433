// Every flag with a value outside its documented range: exit code 1, one "error:" line that names
// the flag and the range, and nothing started (no server, in this process or as a child, and no
// client). The table covers every flag StressOptions has; --help shows each range.
using CommandLine;

namespace NetZlink.Stress.Tests.Cli;

[TestFixture]
public sealed class FlagRangeTests
{
    private const string S0Refusal = "s0 sends one packet on one connection and checks its echo byte by byte";

    /// <summary>A file that exists, where a flag wants one (its content is never read before the flags are judged).</summary>
    private static readonly string AFile = typeof(FlagRangeTests).Assembly.Location;

    /// <summary>(flag under test, command line, what its error line must contain).</summary>
    private static readonly (string Flag, string[] Args, string Expected)[] Table =
    [
        ("--port", ["--port", "0"], "--port must be 1..65535 (got 0); 0, any free port, is for --role server only"),
        ("--tls-cert", ["--transport", "tls", "--tls-cert", "/no/such/server.pem", "--tls-ca", "/no/such/ca.pem"], "--tls-cert /no/such/server.pem: no such file"),
        ("--tls-cert", ["--transport", "tls", "--tls-cert", "/tmp", "--tls-ca", "/no/such/ca.pem"], "--tls-cert /tmp: is a directory, not a PEM file"),
        ("--tls-cert", ["--tls-cert", AFile, "--tls-ca", AFile], "--tls-cert, --tls-key and --tls-ca are for --transport tls or wss or --scenario s4, not --transport tcp"),
        ("--tls-cert", ["--transport", "ws", "--tls-cert", AFile, "--tls-ca", AFile], "--tls-cert, --tls-key and --tls-ca are for --transport tls or wss or --scenario s4, not --transport ws"),
        ("--tls-cert", ["--role", "server", "--transport", "tls"], "--role server --transport tls needs --tls-cert"),
        ("--tls-cert", ["--role", "server", "--transport", "wss"], "--role server --transport wss needs --tls-cert"),
        ("--tls-cert", ["--scenario", "s4", "--tls-cert", AFile], "--role both: give --tls-cert and --tls-ca together, or neither"),
        ("--tls-key", ["--role", "server", "--transport", "tls", "--tls-key", AFile], "--tls-key is the key of --tls-cert: give --tls-cert too"),
        ("--tls-key", ["--role", "server", "--transport", "tls", "--tls-cert", AFile, "--tls-key", " "], "--tls-key needs a file path"),
        ("--tls-ca", ["--role", "client", "--transport", "tls"], "--role client --transport tls needs --tls-ca"),
        ("--tls-ca", ["--role", "client", "--transport", "wss"], "--role client --transport wss needs --tls-ca"),
        ("--tls-ca", ["--role", "client", "--transport", "tls", "--tls-ca", "/no/such/ca.pem"], "--tls-ca /no/such/ca.pem: no such file"),
        ("--port", ["--port", "65536"], "--port must be 1..65535 (got 65536)"),
        ("--port", ["--role", "server", "--port", "-1"], "--port must be 0..65535 (0 = any free port) (got -1)"),
        ("--ccu", ["--ccu", "0"], "--ccu must be 1..1000000"),
        ("--ccu", ["--ccu", "1000001"], "--ccu must be 1..1000000"),
        ("--ccu", ["--ccu", "99999999999"], "--ccu must be a whole number: 1..1000000 (got '99999999999')"),
        ("--size", ["--size", "8"], "--size must be 9..16777212 bytes"),
        ("--size", ["--size", "16777213"], "--size must be 9..16777212 bytes"),
        ("--size", ["--size", "100000000"], "--size must be 9..16777212 bytes"),
        ("--size", ["--size", "2147483647"], "--size must be 9..16777212 bytes"),
        ("--inflight", ["--inflight", "0"], "--inflight must be 1..1000000 (got 0)"),
        ("--inflight", ["--inflight", "1000001"], "--inflight must be 1..1000000 (got 1000001)"),
        ("--warmup", ["--warmup", "-1"], "--warmup must be 0..604800 seconds (got -1)"),
        ("--warmup", ["--warmup", "604801"], "--warmup must be 0..604800 seconds (got 604801)"),
        ("--measure", ["--measure", "1e9"], "--measure must be 0 (no measured phase) or 0.1..604800 seconds (a rate needs a measured phase of at least 0.1 s) (got 1000000000)"),
        ("--measure", ["--measure", "-0.5"], "--measure must be 0 (no measured phase) or 0.1..604800 seconds (a rate needs a measured phase of at least 0.1 s) (got -0.5)"),
        ("--measure", ["--measure", "0.0000001"], "--measure must be 0 (no measured phase) or 0.1..604800 seconds (a rate needs a measured phase of at least 0.1 s) (got 1E-07)"),
        ("--measure", ["--measure", "NaN"], "--measure must be 0 (no measured phase) or 0.1..604800 seconds (a rate needs a measured phase of at least 0.1 s) (got NaN)"),
        ("--measure", ["--measure", "soon"], "--measure must be a number: 0 (no measured phase) or 0.1..604800 seconds (got 'soon')"),
        ("--warmup", ["--warmup", "1,5"], "--warmup must be a number: 0..604800 seconds (got '1,5')"),
        ("--connect-timeout", ["--connect-timeout", "0,5"], "--connect-timeout must be a number: 0.001..3600 seconds (got '0,5')"),
        ("--connect-timeout", ["--connect-timeout=0,5"], "--connect-timeout must be a number: 0.001..3600 seconds (got '0,5')"),
        ("--ccu", ["--ccu", "1,000"], "--ccu must be a whole number: 1..1000000 (got '1,000')"),
        ("--drain-timeout", ["--drain-timeout", "-2"], "--drain-timeout must be 0..3600 seconds (got -2)"),
        ("--drain-timeout", ["--drain-timeout", "3601"], "--drain-timeout must be 0..3600 seconds (got 3601)"),
        ("--connect-concurrency", ["--connect-concurrency", "0"], "--connect-concurrency must be 1..1000000 (got 0)"),
        ("--connect-concurrency", ["--connect-concurrency", "2147483647"], "--connect-concurrency must be 1..1000000 (got 2147483647)"),
        ("--connect-timeout", ["--connect-timeout", "0"], "--connect-timeout must be 0.001..3600 seconds (got 0)"),
        ("--connect-timeout", ["--connect-timeout", "1e6"], "--connect-timeout must be 0.001..3600 seconds (got 1000000)"),
        ("--connect-retries", ["--connect-retries", "-1"], "--connect-retries must be 0..100 (got -1)"),
        ("--connect-retries", ["--connect-retries", "101"], "--connect-retries must be 0..100 (got 101)"),
        ("--connect-retry-delay-ms", ["--connect-retry-delay-ms", "-1"], "--connect-retry-delay-ms must be 0..60000 (got -1)"),
        ("--connect-retry-delay-ms", ["--connect-retry-delay-ms", "60001"], "--connect-retry-delay-ms must be 0..60000 (got 60001)"),
        ("--backlog", ["--backlog", "0"], "--backlog must be 1..2147483647"),
        ("--backlog", ["--backlog", "2147483648"], "--backlog must be a whole number: 1..2147483647 (got '2147483648')"),
        ("--hwm", ["--hwm", "-1"], "--hwm must be 0..2147483647 (0 = no limit) (got -1)"),
        ("--hwm", ["--hwm", "2147483648"], "--hwm must be a whole number: 0..2147483647"),
        ("--sndbuf", ["--sndbuf", "-1"], "--sndbuf must be 0..2147483647"),
        ("--sndbuf", ["--sndbuf", "2147483648"], "--sndbuf must be a whole number: 0..2147483647"),
        ("--rcvbuf", ["--rcvbuf", "-1"], "--rcvbuf must be 0..2147483647"),
        ("--rcvbuf", ["--rcvbuf", "2147483648"], "--rcvbuf must be a whole number: 0..2147483647"),
        ("--io-threads", ["--io-threads", "0"], "--io-threads must be 1..256 (got 0)"),
        ("--io-threads", ["--io-threads", "257"], "--io-threads must be 1..256 (got 257)"),
        ("--shards", ["--shards", "-1"], "--shards must be 0..1024 (0 = one per core) (got -1)"),
        ("--shards", ["--shards", "1025"], "--shards must be 0..1024 (0 = one per core) (got 1025)"),
        ("--send-batch", ["--send-batch", "0"], "--send-batch must be 1..1024 (got 0)"),
        ("--send-batch", ["--send-batch", "1025"], "--send-batch must be 1..1024 (got 1025)"),
        ("--send-batch", ["--send-batch", "1024", "--size", "16777212"], "more than the 2147483591 an array holds: lower --send-batch or --size"),
        ("--latency-sample-rate", ["--latency-sample-rate", "-1"], "--latency-sample-rate must be 0..1000000 (0 = no latency) (got -1)"),
        ("--latency-sample-rate", ["--latency-sample-rate", "1000001"], "--latency-sample-rate must be 0..1000000 (0 = no latency) (got 1000001)"),
        ("--rate", ["--rate", "-1"], "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got -1)"),
        ("--rate", ["--rate", "0.0001"], "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got 0.0001)"),
        ("--rate", ["--rate", "2e9"], "--rate must be 0 (closed loop) or 0.001..1000000000 packets per second (got 2000000000)"),
        ("--rate", ["--rate", "100", "--scenario", "s1"], "--rate paces the s2 load"),
        ("--fault-every", ["--fault-every", "0"], "--fault-every must be 1..1000000 (1 = every connection) (got 0)"),
        ("--fault-every", ["--fault-every", "1000001"], "--fault-every must be 1..1000000 (1 = every connection) (got 1000001)"),
        ("--fault-after", ["--fault-after", "-1"], "--fault-after must be 0..3600 seconds (got -1)"),
        ("--fault-after", ["--fault-after", "1e9"], "--fault-after must be 0..3600 seconds (got 1000000000)"),
        ("--scenario", ["--scenario", "s9"], "--scenario must be one of s0, s1, s2, s3, s4 (got 's9')"),
        ("--role", ["--role", "proxy"], "--role must be one of both, server, client (got 'proxy')"),
        ("--stack", ["--stack", "java"], "--stack must be one of netzlink, dotnet (got 'java')"),
        ("--client-stack", ["--client-stack", "java"], "--client-stack must be one of netzlink, dotnet (got 'java')"),
        ("--server-stack", ["--server-stack", "java"], "--server-stack must be one of netzlink, dotnet (got 'java')"),
        ("--transport", ["--transport", "udp"], "--transport must be one of tcp, tls, ws, wss (got 'udp')"),
        ("--bind-host", ["--bind-host", " "], "--bind-host must not be empty"),
        ("--host", ["--host", " "], "--host must not be empty"),
        ("--start-at", ["--start-at", "1"], "--start-at 1 passed"),
        ("--start-at", ["--start-at", "1e12"], "hours ahead (more than 24 allowed)"),
        ("--scenario-id", ["--scenario-id", "a\u0001b"], "--scenario-id must be non-empty and printable"),
        ("--metrics-csv", ["--metrics-csv", " "], "--metrics-csv needs a file path"),
        ("--summary-json", ["--summary-json", " "], "--summary-json needs a file path"),
        ("--timeseries-csv", ["--timeseries-csv", " "], "--timeseries-csv needs a file path"),
        ("--json-histogram", ["--json-histogram"], "--json-histogram adds the latency histogram to the --summary-json file"),
        ("--fault", ["--fault", "boom"], "--fault must be one of none, silent, garbage, wrong-length, close-mid-packet, slow, crash, stall (got 'boom')"),
        ("--exit-on-stdin-eof", ["--exit-on-stdin-eof"], "--exit-on-stdin-eof is for --role server"),
        ("--ccu", ["--scenario", "s0", "--ccu", "5"], "--ccu: " + S0Refusal),
        ("--inflight", ["--scenario", "s0", "--inflight", "5"], "--inflight: " + S0Refusal),
        ("--warmup", ["--scenario", "s0", "--warmup", "1"], "--warmup: " + S0Refusal),
        ("--measure", ["--scenario", "s0", "--measure", "1"], "--measure: " + S0Refusal),
        ("--latency-sample-rate", ["--scenario", "s0", "--latency-sample-rate", "1"], "--latency-sample-rate: " + S0Refusal),
        ("--processes", ["--processes", "0"], "--processes must be 1..256 (got 0)"),
        ("--processes", ["--processes", "257"], "--processes must be 1..256 (got 257)"),
        ("--processes", ["--processes", "2", "--scenario", "s3"], "--processes splits one s1 or s2 run over several client processes; --scenario s3 is not one"),
        ("--processes", ["--processes", "2", "--role", "server"], "--processes fans the client out over several processes, and --role server runs none"),
        ("--processes", ["--processes", "3", "--ccu", "2"], "--ccu 2 is fewer connections than --processes 3"),
        ("--processes", ["--processes", "2", "--timeseries-csv", "t.csv"], "--timeseries-csv follows one process, and --processes runs several"),
        ("--server-processes", ["--server-processes", "0"], "--server-processes must be 1..256 (got 0)"),
        ("--server-processes", ["--server-processes", "257"], "--server-processes must be 1..256 (got 257)"),
        ("--server-processes", ["--server-processes", "2", "--role", "client"], "--server-processes starts that many echo server children, which only --role both does"),
        ("--server-processes", ["--server-processes", "2", "--client-stack", "dotnet"], "the dotnet client connects to one (use --client-stack netzlink)"),
        ("--server-processes", ["--server-processes", "2", "--port", "65535"], "--server-processes 2 puts its servers on ports 65535..65536, beyond 65535: lower --port"),
        ("--servers", ["--role", "client", "--servers", "127.0.0.1"], "--servers takes host:port entries joined by commas"),
        ("--servers", ["--role", "client", "--servers", "127.0.0.1:1,127.0.0.1:0"], "(got '127.0.0.1:0' in '127.0.0.1:1,127.0.0.1:0')"),
        ("--servers", ["--role", "client", "--servers", "::1:5"], "an IPv6 host in brackets"),
        ("--servers", ["--role", "client", "--servers", "a:1,A:1"], "--servers names a:1 2 times"),
        ("--servers", ["--servers", "a:1,b:1"], "--servers lists the echo servers a --role client connects to"),
        ("--servers", ["--role", "client", "--servers", "a:1", "--port", "5"], "--servers replaces --host and --port"),
        ("--servers", ["--role", "client", "--stack", "dotnet", "--servers", "a:1,b:2"], "--servers with several servers is for the netzlink client"),
        ("--shard-count", ["--shard-count", "0"], "--shard-count must be 1..100000 (got 0)"),
        ("--shard-count", ["--shard-count", "100001"], "--shard-count must be 1..100000 (got 100001)"),
        ("--shard-count", ["--shard-count", "2", "--shard-index", "0"], "--shard-count and --shard-index make a --role client process one share"),
        ("--shard-count", ["--role", "client", "--shard-count", "20", "--shard-index", "0", "--ccu", "10"], "--ccu 10 is fewer connections than --shard-count 20"),
        ("--shard-count", ["--role", "client", "--shard-count", "2", "--shard-index", "0", "--scenario", "s0"], "--shard-count splits one s1 or s2 run"),
        ("--shard-count", ["--processes", "2", "--shard-count", "2", "--shard-index", "0"], "give --processes, or --shard-count and --shard-index, not both"),
        ("--shard-index", ["--role", "client", "--shard-index", "1"], "--shard-index needs --shard-count"),
        ("--start-on-stdin", ["--start-on-stdin"], "--start-on-stdin is for the --role client children of --processes"),
        ("--start-on-stdin", ["--role", "client", "--start-on-stdin", "--start-at", "1e12"], "--start-on-stdin is for the --role client children of --processes"),
        ("--shard-index", ["--role", "client", "--shard-count", "3", "--shard-index", "3"], "--shard-index must be 0..2 for --shard-count 3 (got 3)"),
        ("--shard-index", ["--role", "client", "--shard-count", "3", "--shard-index", "-1"], "--shard-index must be 0..2 for --shard-count 3 (got -1)"),
        ("--ccu", ["--stack", "dotnet", "--ccu", "1000", "--shards", "1", "--size", "16777212"],
            "--ccu 1000 over 1 shards puts 1000 connections on one shard: 16777216000 bytes, more than the 2147483591 an array holds"),
    ];

    private static IEnumerable<TestCaseData> Cases =>
        Table.Select(c => new TestCaseData(c.Args, c.Expected).SetArgDisplayNames(string.Join(' ', c.Args)));

    [TestCaseSource(nameof(Cases))]
    [CancelAfter(10_000)]
    public async Task AValueOutsideItsRangeIsAUsageErrorBeforeAnythingStarts(string[] args, string expected, CancellationToken cancellationToken)
    {
        var started = new List<string>();
        using var stdout = new StringWriter();
        using var stderr = new StringWriter();
        var app = new StressApp(
            stdout,
            stderr,
            runClient: (settings, _, _) =>
            {
                started.Add($"client {settings.Scenario}");
                throw new InvalidOperationException("a client would run here");
            },
            transportAvailable: _ => true,
            serverStarting: settings =>
            {
                started.Add($"server on port {settings.Port}");
                throw new StressHostException("a server would start here");
            });

        int exitCode = await app.RunAsync(args, cancellationToken);

        Assert.Multiple(() =>
        {
            Assert.That(exitCode, Is.EqualTo(ExitCodes.Usage), stderr.ToString());
            Assert.That(stderr.ToString(), Does.StartWith("error: ").And.Contain(expected));
            Assert.That(started, Is.Empty, "something started before the flags were checked");
            Assert.That(stdout.ToString(), Is.Empty);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheTableCoversEveryFlag()
    {
        string[] flags = typeof(StressOptions).GetProperties()
            .Select(p => p.GetCustomAttribute<OptionAttribute>()?.LongName)
            .OfType<string>()
            .Where(name => name != "quiet")
            .Select(name => "--" + name)
            .ToArray();

        Assert.That(Table.Select(c => c.Flag).Distinct(), Is.SupersetOf(flags));
    }

    [Test]
    [CancelAfter(10_000)]
    public void EveryRangeHasARowBelowAndAboveIt()
    {
        foreach (FlagRange range in FlagRanges.All)
        {
            double[] rejected = [.. Table.Where(c => c.Flag == range.Flag && c.Args.Length == 2 && c.Args[0] == range.Flag
                && double.TryParse(c.Args[1], System.Globalization.CultureInfo.InvariantCulture, out _))
                .Select(c => double.Parse(c.Args[1], System.Globalization.CultureInfo.InvariantCulture))];
            Assert.Multiple(() =>
            {
                Assert.That(rejected, Has.Some.LessThan(range.Min), range.Flag);
                Assert.That(rejected, Has.Some.GreaterThan(range.Max), range.Flag);
            });
        }
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheBoundsThemselvesAreAccepted()
    {
        // Each of these goes with a role or another flag, checked below.
        foreach (FlagRange range in FlagRanges.All.Where(r => r.Flag is not ("--rate" or "--send-batch" or "--server-processes" or "--shard-count")))
        {
            foreach (double bound in new[] { range.Min, range.Max })
            {
                string[] args = ["--role", "client", range.Flag, FlagRange.Format(bound)];
                Assert.That(CommandLineParsing.Parse(args).Errors, Is.Empty, string.Join(' ', args));
            }
        }

        Assert.Multiple(() =>
        {
            Assert.That(CommandLineParsing.Parse(["--rate", "0.001"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--rate", "1e9"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--send-batch", "1024"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--send-batch", "127", "--size", "16777212"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--role", "server", "--exit-on-stdin-eof", "--port", "0"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--scenario", "s0", "--size", "64", "--drain-timeout", "3"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--scenario", "s4", "--ccu", "5", "--warmup", "1"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--server-processes", "256"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--role", "client", "--shard-count", "1", "--shard-index", "0"]).Errors, Is.Empty);
            Assert.That(CommandLineParsing.Parse(["--role", "client", "--shard-count", "100000", "--shard-index", "99999", "--ccu", "100000"]).Errors, Is.Empty);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void HelpGivesEveryRange()
    {
        string help = CommandLineParsing.Parse(["--help"]).Text!;

        foreach (FlagRange range in FlagRanges.All.Append(FlagRanges.ServerPort))
        {
            Assert.That(HelpOf(help, range.Flag), Does.Contain($"{FlagRange.Format(range.Min)}..{FlagRange.Format(range.Max)}"), range.Flag);
        }

        Assert.Multiple(() =>
        {
            Assert.That(HelpOf(help, "--exit-on-stdin-eof"), Does.Contain("end of file"));
            Assert.That(HelpOf(help, "--scenario"), Does.Contain("--ccu --inflight --warmup --measure --latency-sample-rate are refused"));
        });
    }

    /// <summary>The help lines of <paramref name="flag"/>: its own line ("  --flag  …") and the wrapped ones after it (indented further).</summary>
    private static string HelpOf(string help, string flag)
    {
        string[] lines = help.Split('\n');
        int start = Array.FindIndex(lines, l => l.StartsWith("  " + flag + " ", StringComparison.Ordinal));
        Assert.That(start, Is.Not.Negative, $"{flag} is not in --help");
        var text = new System.Text.StringBuilder(lines[start]);
        for (int i = start + 1; i < lines.Length && lines[i].StartsWith("   ", StringComparison.Ordinal); i++)
        {
            text.Append(' ').Append(lines[i].Trim());
        }

        return text.ToString();
    }
}
