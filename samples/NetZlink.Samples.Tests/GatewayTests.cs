// The gateway sample end to end: started as its own process, fed requests by DEALER clients (one
// with a REQ-style empty delimiter), stopped with SIGTERM. Its backends are found through zlink's
// service layer: a registry and echo backends (ZlinkReceivers answering [request id][body] with
// the same) run in the test process, so a backend can die with requests in flight and another can
// join while the gateway runs. Every reply must be exactly its request, once.
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using NetZlink.Services;

namespace NetZlink.Samples.Tests;

[TestFixture]
[NonParallelizable]
public sealed partial class GatewayTests
{
    private static readonly TimeSpan ReplyPatience = TimeSpan.FromSeconds(20);

    [Test]
    [CancelAfter(120_000)]
    public async Task ServesRequestsThroughTheBackendsAndStopsCleanlyOnSigterm(CancellationToken cancellationToken)
    {
        int seed = SeedFor(nameof(ServesRequestsThroughTheBackendsAndStopsCleanlyOnSigterm));
        var random = new Random(seed);
        await using var cluster = new Cluster();
        await cluster.AddBackendAsync(cancellationToken);
        await cluster.AddBackendAsync(cancellationToken);
        using GatewayProcess gateway = cluster.StartGateway();
        string frontend = await FrontendWithBackendsAsync(gateway, 2, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = ConnectDealer(context, frontend);
        const int Requests = 300;
        var outstanding = new HashSet<string>(StringComparer.Ordinal);
        for (int i = 0; i < Requests; i++)
        {
            string body = $"{i}:" + new string((char)('a' + random.Next(26)), random.Next(0, 4000));
            outstanding.Add(body);
            dealer.Send(Encoding.UTF8.GetBytes(body));
        }

        var reply = new List<byte[]>();
        for (int i = 0; i < Requests; i++)
        {
            reply.Clear(); // TryReceiveMultipart appends
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"reply {i} of {Requests} did not come (seed {seed}); {outstanding.Count} outstanding\n{gateway.Output}");
            Assert.That(reply, Has.Count.EqualTo(1), "a DEALER reply is one frame: the body");
            string text = Encoding.UTF8.GetString(reply[0]);
            Assert.That(outstanding.Remove(text), Is.True, $"reply '{Clip(text)}' matches no outstanding request (seed {seed})\n{gateway.Output}");
        }

        Assert.That(cluster.Backends.All(b => b.Answered > 0), Is.True, "both backends took requests (round-robin)");

        // A client that puts an empty delimiter before its body (REQ-style) gets it back before the reply.
        using ZlinkSocket delimited = ConnectDealer(context, frontend);
        delimited.SendMultipart(new[] { Array.Empty<byte>(), "with a delimiter"u8.ToArray() });
        reply.Clear();
        Assert.That(delimited.TryReceiveMultipart(reply, ReplyPatience), Is.True, "the delimited request got no reply");
        Assert.That(reply, Has.Count.EqualTo(2));
        Assert.That(reply[0], Is.Empty);
        Assert.That(Encoding.UTF8.GetString(reply[1]), Is.EqualTo("with a delimiter"));

        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
            Assert.That(gateway.Output, Does.Contain($"gateway stopped: {Requests + 1} requests served, 0 failed, 0 tries sent again, 0 late answers dropped"));
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task ABackendThatDiesWithRequestsInFlightAndOneThatJoinsLoseNoRequest(CancellationToken cancellationToken)
    {
        await using var cluster = new Cluster();
        Backend dying = await cluster.AddBackendAsync(cancellationToken, answers: false); // takes requests, answers none, then dies
        Backend steady = await cluster.AddBackendAsync(cancellationToken);
        using GatewayProcess gateway = cluster.StartGateway("--Gateway:AttemptTimeout=00:00:00.500");
        string frontend = await FrontendWithBackendsAsync(gateway, 2, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = ConnectDealer(context, frontend);

        // Round 1: half of the requests go to the backend that holds them; it dies holding them.
        const int Requests = 200;
        for (int i = 0; i < Requests; i++)
        {
            dealer.Send(Encoding.UTF8.GetBytes($"r1-{i}"));
        }

        Wait(() => dying.Held + steady.Answered >= Requests, "every first try reached a backend");
        int held = dying.Held;
        Assert.That(held, Is.GreaterThan(0), "the dying backend held requests when it died");
        await dying.Receiver.DisposeAsync(); // a crash: no UNREGISTER, its connections close
        await ExpectRepliesAsync(dealer, "r1-", Requests, gateway);

        // The registry drops the dead backend when its heartbeats stop; a new one joins.
        await gateway.WaitForLineAsync(l => l.Contains("backends of echo: 1 (", StringComparison.Ordinal), cancellationToken);
        Backend joined = await cluster.AddBackendAsync(cancellationToken);
        await gateway.WaitForLineAsync(l => l.Contains("backends of echo: 2 (", StringComparison.Ordinal), cancellationToken);

        // Listed is not yet connected (the gateway skips a backend whose connection is not
        // complete): one request at a time until the new backend answers one.
        int probes = 0;
        while (joined.Answered == 0)
        {
            dealer.Send(Encoding.UTF8.GetBytes($"probe-{probes}"));
            await ExpectRepliesAsync(dealer, $"probe-{probes}", 1, gateway, exact: true);
            probes++;
        }

        // Round 2: the new backend takes its share.
        int steadyBefore = steady.Answered, joinedBefore = joined.Answered;
        for (int i = 0; i < Requests; i++)
        {
            dealer.Send(Encoding.UTF8.GetBytes($"r2-{i}"));
        }

        await ExpectRepliesAsync(dealer, "r2-", Requests, gateway);
        Assert.That(joined.Answered - joinedBefore, Is.GreaterThan(0), "the backend that joined took requests");
        // At least once each: an answer slower than the 500 ms attempt timeout (a loaded machine:
        // runs at load 16 saw 400 answers for 200 requests) makes the gateway send the try again, and the
        // backend answers both; the late one is dropped, which the stop line's counts check below.
        Assert.That(joined.Answered - joinedBefore + steady.Answered - steadyBefore, Is.GreaterThanOrEqualTo(Requests), "round 2 answered by the two live backends, each request at least once");
        TestContext.Out.WriteLine($"held {dying.Held}, steady {steady.Answered}, joined {joined.Answered}, probes {probes}");

        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
        Match stopped = Stopped().Match(gateway.Output);
        Assert.That(stopped.Success, Is.True, gateway.Output);
        int served = int.Parse(stopped.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
        int failed = int.Parse(stopped.Groups[2].Value, System.Globalization.CultureInfo.InvariantCulture);
        int resent = int.Parse(stopped.Groups[3].Value, System.Globalization.CultureInfo.InvariantCulture);
        int late = int.Parse(stopped.Groups[4].Value, System.Globalization.CultureInfo.InvariantCulture);
        Assert.Multiple(() =>
        {
            Assert.That((served, failed), Is.EqualTo((2 * Requests + probes, 0)), gateway.Output);
            // Every try the dead backend held was sent again; a try sent again only because an
            // answer was slow shows as one late answer at most.
            Assert.That(resent, Is.GreaterThanOrEqualTo(dying.Held), gateway.Output);
            Assert.That(late, Is.LessThanOrEqualTo(resent - dying.Held), gateway.Output);
            // Every answer a live backend gave is a served request or a late one, dropped.
            Assert.That(steady.Answered + joined.Answered, Is.EqualTo(served + late), gateway.Output);
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task ABackendThatNeverAnswersFailsTheRequestsAndSigtermStillStopsIt(CancellationToken cancellationToken)
    {
        await using var cluster = new Cluster();
        await cluster.AddBackendAsync(cancellationToken, answers: false);
        using GatewayProcess gateway = cluster.StartGateway("--Gateway:BackendTimeout=00:00:02", "--Gateway:AttemptTimeout=00:00:00.500");
        string frontend = await FrontendWithBackendsAsync(gateway, 1, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = ConnectDealer(context, frontend);
        dealer.Send("first"u8);
        var reply = new List<byte[]>();
        Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"no error reply came\n{gateway.Output}");
        Assert.That(Encoding.UTF8.GetString(reply[0]), Does.StartWith("error: no backend of echo answered within"));

        // Two more requests, then SIGTERM while they wait for the backend: the service answers
        // them (with errors) within its timeout and exits 0.
        dealer.Send("second"u8);
        dealer.Send("third"u8);
        await Task.Delay(300, cancellationToken);
        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
            Assert.That(gateway.Output, Does.Contain("gateway stopped: 0 requests served, 3 failed"));
        });
        for (int i = 0; i < 2; i++)
        {
            reply.Clear();
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"error reply {i} for the requests in flight at SIGTERM did not come\n{gateway.Output}");
            Assert.That(Encoding.UTF8.GetString(reply[0]), Does.StartWith("error: "));
        }
    }

    [TestCase("--Gateway:BackendTimeout=-00:00:01", 2, "gateway: Gateway:BackendTimeout must be positive")]
    [TestCase("--Gateway:BackendTimeout=banana", 2, "gateway: Failed to convert configuration value 'banana' at 'Gateway:BackendTimeout'")]
    [TestCase("--Gateway:AttemptTimeout=00:00:10", 2, "gateway: Gateway:AttemptTimeout must be positive and at most Gateway:BackendTimeout")]
    [TestCase("--Gateway:MaxRequestBytes=16777217", 2, "gateway: Gateway:MaxRequestBytes must be 1..16777216")]
    [TestCase("--Gateway:Service=", 2, "gateway: Gateway:FrontendEndpoint and Gateway:Service must be set")]
    [TestCase("--Gateway:FrontendEndpoint=garbage", 2, "gateway cannot start:")]
    [TestCase("--NetZlink:Gateway:RegistryEndpoint=garbage", 2, "gateway cannot start: NetZlink:Gateway:RegistryEndpoint is 'garbage': a registry's publish endpoint is tcp://host:port")]
    [TestCase("--NetZlink:Gateway:RegistyEndpoint=tcp://127.0.0.1:9", 2, "gateway cannot start: NetZlink:Gateway:RegistyEndpoint is not a setting of a NetZlink gateway")]
    [CancelAfter(60_000)]
    public async Task BadSettingsStopItWithOneLineAndItsExitCode(string setting, int exitCode, string text, CancellationToken cancellationToken)
    {
        using GatewayProcess gateway = GatewayProcess.Start("--Gateway:FrontendEndpoint=tcp://127.0.0.1:*", "--NetZlink:Gateway:RegistryEndpoint=tcp://127.0.0.1:9", setting);
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.Multiple(() =>
        {
            Assert.That(gateway.ExitCode, Is.EqualTo(exitCode), gateway.Output);
            Assert.That(gateway.Output, Does.Contain(text));
            Assert.That(gateway.Output, Does.Not.Contain("   at "), "a stack trace instead of one line");
        });
    }

    [Test]
    [CancelAfter(120_000)]
    public async Task AClientThatSendsThousandsBeforeReadingGetsEveryReply(CancellationToken cancellationToken)
    {
        await using var cluster = new Cluster();
        await cluster.AddBackendAsync(cancellationToken);
        using GatewayProcess gateway = cluster.StartGateway();
        string frontend = await FrontendWithBackendsAsync(gateway, 1, cancellationToken);

        using var context = new ZlinkContext();
        using ZlinkSocket dealer = ConnectDealer(context, frontend, sendHighWaterMark: 0);
        const int Requests = 5000;
        for (int i = 0; i < Requests; i++)
        {
            dealer.Send(Encoding.UTF8.GetBytes($"p{i}"));
        }

        // One big request in the middle of it (within MaxRequestBytes) changes nothing for the others.
        byte[] big = new byte[60_000];
        Random.Shared.NextBytes(big);
        dealer.Send(big);

        var seen = new HashSet<string>(StringComparer.Ordinal);
        var reply = new List<byte[]>();
        bool bigBack = false;
        for (int i = 0; i < Requests + 1; i++)
        {
            reply.Clear();
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"{seen.Count} of {Requests} replies came, then none\n{gateway.Output}");
            if (reply[0].Length == big.Length)
            {
                Assert.That(reply[0], Is.EqualTo(big));
                bigBack = true;
                continue;
            }

            Assert.That(seen.Add(Encoding.UTF8.GetString(reply[0])), Is.True, "a reply came twice");
        }

        Assert.That(bigBack, Is.True);
        Assert.That(seen, Has.Count.EqualTo(Requests));
        Assert.That(Enumerable.Range(0, Requests).All(i => seen.Contains($"p{i}")), Is.True, "every request got its own reply");
        gateway.Signal("TERM");
        await gateway.WaitForExitAsync(cancellationToken);
        Assert.That(gateway.ExitCode, Is.Zero, gateway.Output);
    }

    /// <summary>Receives <paramref name="count"/> replies, each exactly one request <paramref name="prefix"/><c>i</c>, once.</summary>
    private static async Task ExpectRepliesAsync(ZlinkSocket dealer, string prefix, int count, GatewayProcess gateway, bool exact = false)
    {
        if (exact)
        {
            var one = new List<byte[]>();
            Assert.That(dealer.TryReceiveMultipart(one, ReplyPatience), Is.True, $"no reply to {prefix}\n{gateway.Output}");
            Assert.That(Encoding.UTF8.GetString(one[0]), Is.EqualTo(prefix));
            return;
        }

        await Task.Yield();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var reply = new List<byte[]>();
        for (int i = 0; i < count; i++)
        {
            reply.Clear();
            Assert.That(dealer.TryReceiveMultipart(reply, ReplyPatience), Is.True, $"{seen.Count} of {count} {prefix} replies came, then none\n{gateway.Output}");
            string text = Encoding.UTF8.GetString(reply[0]);
            Assert.That(text, Does.StartWith(prefix), $"a reply that is no {prefix} request: {text}");
            Assert.That(seen.Add(text), Is.True, $"{text} answered twice");
        }

        Assert.That(Enumerable.Range(0, count).All(i => seen.Contains($"{prefix}{i}")), Is.True, "every request got its own reply");
    }

    private static void Wait(Func<bool> condition, string what)
    {
        DateTime deadline = DateTime.UtcNow + ReplyPatience;
        while (!condition())
        {
            Assert.That(DateTime.UtcNow, Is.LessThan(deadline), "timed out waiting until " + what);
            Thread.Sleep(5);
        }
    }

    /// <summary>The gateway's frontend endpoint, once it listens and discovery lists <paramref name="backends"/> backends.</summary>
    /// <summary>A DEALER (no linger; sendHighWaterMark set first when given) connected to the gateway's frontend.</summary>
    private static ZlinkSocket ConnectDealer(ZlinkContext context, string frontend, int? sendHighWaterMark = null)
    {
        ZlinkSocket dealer = context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.Linger = 0;
        if (sendHighWaterMark is int hwm)
        {
            dealer.SendHighWaterMark = hwm;
        }

        dealer.Connect(frontend);
        return dealer;
    }

    private static async Task<string> FrontendWithBackendsAsync(GatewayProcess gateway, int backends, CancellationToken cancellationToken)
    {
        string frontend = await ListeningEndpointAsync(gateway, cancellationToken);
        await gateway.WaitForLineAsync(l => l.Contains($"backends of echo: {backends} (", StringComparison.Ordinal), cancellationToken);
        return frontend;
    }

    /// <summary>A registry (heartbeats expire in 600 ms) and the echo backends registered with it.</summary>
    private sealed class Cluster : IAsyncDisposable
    {
        private readonly ZlinkContext _context = new();

        public Cluster() => Registry = new ZlinkRegistry(_context, new RegistryOptions
        {
            PubEndpoint = "tcp://127.0.0.1:*",
            RouterEndpoint = "tcp://127.0.0.1:*",
            HeartbeatTimeout = TimeSpan.FromMilliseconds(600),
            BroadcastInterval = TimeSpan.FromMilliseconds(300),
        });

        public ZlinkRegistry Registry { get; }

        public List<Backend> Backends { get; } = [];

        /// <summary>The gateway sample on a free frontend port, finding its backends through this registry; <paramref name="settings"/> added.</summary>
        public GatewayProcess StartGateway(params string[] settings) =>
            GatewayProcess.Start(["--Gateway:FrontendEndpoint=tcp://127.0.0.1:*", $"--NetZlink:Gateway:RegistryEndpoint={Registry.PubEndpoint}", .. settings]);

        public async Task<Backend> AddBackendAsync(CancellationToken cancellationToken, bool answers = true)
        {
            var receiver = new ZlinkReceiver(_context, new ReceiverOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(100) });
            receiver.Bind("tcp://127.0.0.1:*");
            await receiver.ConnectRegistryAsync(Registry.RouterEndpoint);
            await receiver.RegisterAsync("echo", cancellationToken: cancellationToken);
            var backend = new Backend(receiver, answers);
            Backends.Add(backend);
            return backend;
        }

        public async ValueTask DisposeAsync()
        {
            foreach (Backend b in Backends)
            {
                await b.Receiver.DisposeAsync();
                await b.Loop;
            }

            await Registry.DisposeAsync();
            _context.Dispose();
        }
    }

    /// <summary>An echo backend: answers [request id][body] with the same two parts, or (answers: false) holds every request.</summary>
    private sealed class Backend
    {
        private int _answered;
        private int _held;

        public Backend(ZlinkReceiver receiver, bool answers)
        {
            Receiver = receiver;
            Loop = Task.Run(async () =>
            {
                try
                {
                    await foreach (ServiceMessage m in receiver.Requests.ReadAllAsync())
                    {
                        using (m)
                        {
                            if (!answers)
                            {
                                Interlocked.Increment(ref _held);
                            }
                            else if (m.PartCount == 2 && receiver.Send(m.Peer, [m.GetPartMemory(0), m.GetPartMemory(1)]))
                            {
                                Interlocked.Increment(ref _answered);
                            }
                        }
                    }
                }
                catch (ObjectDisposedException)
                {
                    // died under the loop
                }
            });
        }

        public ZlinkReceiver Receiver { get; }

        public Task Loop { get; }

        public int Answered => Volatile.Read(ref _answered);

        public int Held => Volatile.Read(ref _held);
    }

    private static async Task<string> ListeningEndpointAsync(GatewayProcess gateway, CancellationToken cancellationToken)
    {
        string line = await gateway.WaitForLineAsync(l => Listening().IsMatch(l), cancellationToken);
        return Listening().Match(line).Groups[1].Value;
    }

    private static int SeedFor(string test)
    {
        string? fixedSeed = Environment.GetEnvironmentVariable("NETZLINK_FUZZ_SEED");
        int seed = fixedSeed is null ? Random.Shared.Next() : int.Parse(fixedSeed, System.Globalization.CultureInfo.InvariantCulture);
        TestContext.Out.WriteLine($"{test}: seed {seed} (replay with NETZLINK_FUZZ_SEED={seed})");
        return seed;
    }

    private static string Clip(string text) => text.Length <= 40 ? text : text[..40] + "...";

    [GeneratedRegex(@"gateway listening on (tcp://[0-9.]+:\d+)")]
    private static partial Regex Listening();

    [GeneratedRegex(@"gateway stopped: (\d+) requests served, (\d+) failed, (\d+) tries sent again, (\d+) late answers dropped")]
    private static partial Regex Stopped();
}
