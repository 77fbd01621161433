// NetZlink's managed services against a real zlink 1.3, opt in: runs only when
// ZLINK_REFERENCE_LIBRARY names a real zlink libzlink.so. The other side is a child process, of one
// of two kinds: "zlink" runs zlink's own C services (native/tests/interop/zlink_services_peer.c,
// compiled here with cc, loading the reference library with dlopen); "managed" runs NetZlink's
// services on the reference library (NetZlink.ServicesPeer with NETZLINK_NATIVE_LIBRARY set to
// it). This process runs NetZlink's services on whatever library the tests use (NetZlink's own
// unless NETZLINK_NATIVE_LIBRARY says otherwise). docs/interop.md has the matrix and last results.
using System.Diagnostics;
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[NonParallelizable]
[CancelAfter(60_000)]
public sealed partial class ServiceInteropTests
{
    private const string Service = "interop-echo";
    private static string? s_peerPath;

    private static string ReferenceLibrary()
    {
        string? reference = Environment.GetEnvironmentVariable("ZLINK_REFERENCE_LIBRARY");
        if (string.IsNullOrEmpty(reference))
        {
            Assert.Ignore("ZLINK_REFERENCE_LIBRARY is not set: no real zlink to check the services against");
        }

        if (!File.Exists(reference))
        {
            Assert.Fail($"ZLINK_REFERENCE_LIBRARY={reference}: no such file");
        }

        return reference!;
    }

    private static string PeerProgram()
    {
        ReferenceLibrary();
        if (s_peerPath is not null)
        {
            return s_peerPath;
        }

        string dir = TestContext.CurrentContext.TestDirectory;
        string? source = null;
        for (var d = new DirectoryInfo(dir); d is not null; d = d.Parent)
        {
            string candidate = Path.Combine(d.FullName, "native", "tests", "interop", "zlink_services_peer.c");
            if (File.Exists(candidate))
            {
                source = candidate;
                break;
            }
        }

        Assert.That(source, Is.Not.Null, "native/tests/interop/zlink_services_peer.c not found above " + dir);
        string output = Path.Combine(Path.GetTempPath(), $"zlink_services_peer-{Environment.ProcessId}");
        using var cc = Process.Start(new ProcessStartInfo("cc", ["-O1", "-o", output, source!, "-ldl"]) { RedirectStandardError = true })!;
        string errors = cc.StandardError.ReadToEnd();
        cc.WaitForExit();
        Assert.That(cc.ExitCode, Is.Zero, "cc failed: " + errors);
        return s_peerPath = output;
    }

    private static string ManagedPeer()
    {
        // NetZlink.ServicesPeer is built with the tests (a project reference without its assembly).
        string dir = TestContext.CurrentContext.TestDirectory;
        string configuration = new DirectoryInfo(dir).Parent!.Name;
        for (var d = new DirectoryInfo(dir); d is not null; d = d.Parent)
        {
            string candidate = Path.Combine(d.FullName, "NetZlink.ServicesPeer", "bin", configuration, "net10.0", "NetZlink.ServicesPeer.dll");
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        Assert.Fail("NetZlink.ServicesPeer.dll not found: build the solution");
        return "";
    }

    private static string Prefix(string kind) => kind == "zlink" ? "ref:" : "mgd:";

    private sealed class Peer : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly List<string> _lines = [];
        private readonly string _kind = "";

        public Peer(string kind, params string[] args)
        {
            ProcessStartInfo start;
            if (kind == "zlink")
            {
                start = new ProcessStartInfo(PeerProgram(), args);
            }
            else
            {
                start = new ProcessStartInfo("dotnet", [ManagedPeer(), .. args]);
                start.Environment["NETZLINK_NATIVE_LIBRARY"] = ReferenceLibrary();
            }

            start.RedirectStandardInput = true;
            start.RedirectStandardOutput = true;
            start.RedirectStandardError = true;
            _process = Process.Start(start)!;
            TestContext.Out.WriteLine($"{kind} peer: {string.Join(' ', args)}");
            _kind = kind;
        }

        public async Task<string> LineAsync(string prefix)
        {
            while (true)
            {
                string? line = await _process.StandardOutput.ReadLineAsync(Wait.Token);
                if (line is null)
                {
                    string err = await _process.StandardError.ReadToEndAsync();
                    Assert.Fail($"the {_kind} peer ended before '{prefix}': {string.Join(" | ", _lines)} {err}");
                }

                _lines.Add(line!);
                TestContext.Out.WriteLine($"  {_kind} peer: " + line);
                if (line!.StartsWith("FAIL", StringComparison.Ordinal))
                {
                    Assert.Fail($"{_kind} peer: " + line);
                }

                if (line.StartsWith(prefix, StringComparison.Ordinal))
                {
                    return line;
                }
            }
        }

        /// <summary>Writes a line to the peer's stdin.</summary>
        public async Task WriteLineAsync(string line)
        {
            await _process.StandardInput.WriteLineAsync(line);
            await _process.StandardInput.FlushAsync();
        }

        /// <summary>Closes stdin (the end signal) and checks the peer passed.</summary>
        public async Task<string> FinishAsync()
        {
            _process.StandardInput.Close();
            string line = await LineAsync("PASS");
            await _process.WaitForExitAsync(Wait.Token);
            Assert.That(_process.ExitCode, Is.Zero);
            return line;
        }

        public async ValueTask DisposeAsync()
        {
            if (!_process.HasExited)
            {
                _process.Kill();
                await _process.WaitForExitAsync();
            }

            _process.Dispose();
        }
    }

    // zlink's receiver advertises its bind endpoint as given (a "*" port stays "*"), so its peer
    // binds a port chosen here.
    private static string FreeTcp()
    {
        using var l = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        l.Start();
        return $"tcp://127.0.0.1:{((System.Net.IPEndPoint)l.LocalEndpoint).Port}";
    }

    /// <summary>Sends <paramref name="count"/> requests through a NetZlink gateway and checks every
    /// answer comes back once, as <paramref name="prefix"/> + the request.</summary>
    private static async Task RoundTripsAsync(ZlinkContext context, string registryPub, int count, string prefix)
    {
        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(registryPub);
        await discovery.WaitForAsync(Service, r => r.Count > 0, Wait.Token);
        await using var gateway = new ZlinkGateway(context, discovery);
        var seen = new HashSet<string>();
        for (int i = 0; i < count; i++)
        {
            await gateway.SendAsync(Service, System.Text.Encoding.UTF8.GetBytes($"req-{i}"), Wait.Token);
        }

        for (int i = 0; i < count; i++)
        {
            using ServiceMessage reply = await gateway.ReceiveAsync(Wait.Token);
            Assert.That(reply.Service, Is.EqualTo(Service));
            string text = System.Text.Encoding.UTF8.GetString(reply[0]);
            Assert.That(text, Does.StartWith(prefix + "req-"));
            Assert.That(seen.Add(text), Is.True, "repeated answer " + text);
        }

        Assert.That(discovery.RefusedMessages, Is.Zero, discovery.LastRefusal);
    }

    /// <summary>A NetZlink receiver answering "net:" + request until cancelled.</summary>
    private static async Task EchoAsync(ZlinkReceiver receiver, CancellationToken stop)
    {
        try
        {
            while (true)
            {
                using ServiceMessage m = await receiver.ReceiveAsync(stop);
                byte[] answer = [.. "net:"u8, .. m[0]];
                Assert.That(receiver.Send(m.Peer, answer), Is.True);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    [TestCase("zlink")]
    [TestCase("managed")]
    public async Task A_NetZlink_receiver_in_a_zlink_registry_is_reached_by_a_NetZlink_and_a_zlink_gateway(string kind)
    {
        string pub = FreeTcp(), router = FreeTcp();
        await using var registry = new Peer(kind, "registry", pub, router, "2000", "300", "60");
        await registry.LineAsync("READY");
        using var context = new ZlinkContext();
        await using var receiver = new ZlinkReceiver(context, new ReceiverOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(200) });
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(router);
        await receiver.RegisterAsync(Service, weight: 3, cancellationToken: Wait.Token);
        using var stop = new CancellationTokenSource();
        Task echo = EchoAsync(receiver, stop.Token);

        await RoundTripsAsync(context, pub, 200, "net:");
        await using (var zlinkGateway = new Peer(kind, "gateway", pub, Service, "200", "20"))
        {
            await zlinkGateway.LineAsync("PASS gateway 200");
        }

        await stop.CancelAsync();
        await echo;
        Assert.That(receiver.RefusedMessages, Is.Zero, receiver.LastRefusal);
        await registry.FinishAsync();
    }

    [TestCase("zlink")]
    [TestCase("managed")]
    public async Task A_zlink_receiver_in_a_NetZlink_registry_is_reached_by_a_NetZlink_and_a_zlink_gateway(string kind)
    {
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        await using var receiver = new Peer(kind, "receiver", registry.RouterEndpoint, FreeTcp(), Service, "2", "60");
        await receiver.LineAsync("READY");
        IReadOnlyList<ReceiverInfo> listed = await registry.GetReceiversAsync();
        Assert.That(listed, Has.Count.EqualTo(1));
        Assert.That(listed[0].Weight, Is.EqualTo(2u));
        Assert.That(listed[0].RoutingId.Length, Is.EqualTo(5), "receiver ids are 5 bytes");

        await RoundTripsAsync(context, registry.PubEndpoint, 200, Prefix(kind));
        await using (var zlinkGateway = new Peer(kind, "gateway", registry.PubEndpoint, Service, "200", "20"))
        {
            await zlinkGateway.LineAsync("PASS gateway 200");
        }

        await receiver.FinishAsync();
        Assert.That(registry.RefusedMessages, Is.Zero, registry.LastRefusal);
    }

    [TestCase("zlink")]
    [TestCase("managed")]
    public async Task A_zlink_registry_and_a_NetZlink_registry_form_one_cluster(string kind)
    {
        using var context = new ZlinkContext();
        string zpub = FreeTcp(), zrouter = FreeTcp();
        await using var ours = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
        await using var theirs = new Peer(kind, "registry", zpub, zrouter, "2000", "300", "60", ours.PubEndpoint);
        await theirs.LineAsync("READY");
        await ours.AddPeerAsync(zpub);

        // A zlink receiver in the zlink registry, reached through the NetZlink registry.
        await using var zreceiver = new Peer(kind, "receiver", zrouter, FreeTcp(), Service, "1", "60");
        await zreceiver.LineAsync("READY");
        await RoundTripsAsync(context, ours.PubEndpoint, 100, Prefix(kind));

        // A NetZlink receiver in the NetZlink registry, reached by a zlink gateway through the zlink registry.
        await using var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(ours.RouterEndpoint);
        await receiver.RegisterAsync(Service, cancellationToken: Wait.Token);
        using var stop = new CancellationTokenSource();
        Task echo = EchoAsync(receiver, stop.Token);
        await using (var zlinkGateway = new Peer(kind, "gateway", zpub, Service, "200", "20"))
        {
            string ready = await zlinkGateway.LineAsync("READY");
            await zlinkGateway.LineAsync("PASS gateway 200");
            TestContext.Out.WriteLine(ready);
        }

        await stop.CancelAsync();
        await echo;
        await zreceiver.FinishAsync();
        await theirs.FinishAsync();
        Assert.That(ours.RefusedMessages, Is.Zero, ours.LastRefusal);
    }

    /// <summary>A NetZlink SPOT node and the peer's SPOT node, registered in one registry (ours or
    /// the peer's kind), find each other through discovery and exchange exact and pattern topics
    /// both ways: every matching message once and in order, nothing unsubscribed.</summary>
    [TestCase("zlink", "ours")]
    [TestCase("zlink", "theirs")]
    [TestCase("managed", "ours")]
    [TestCase("managed", "theirs")]
    public async Task A_NetZlink_spot_node_and_a_zlink_spot_node_exchange_topics_both_ways(string kind, string registryKind)
    {
        const int count = 200;
        using var context = new ZlinkContext();
        ZlinkRegistry? ours = null;
        Peer? theirs = null;
        string router, pub;
        if (registryKind == "ours")
        {
            ours = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());
            (router, pub) = (ours.RouterEndpoint, ours.PubEndpoint);
        }
        else
        {
            (pub, router) = (FreeTcp(), FreeTcp());
            theirs = new Peer(kind, "registry", pub, router, "2000", "300", "60");
            await theirs.LineAsync("READY");
        }

        try
        {
            await using var peer = new Peer(kind, "spot", router, pub, FreeTcp(), count.ToString(System.Globalization.CultureInfo.InvariantCulture), "60");
            await peer.LineAsync("READY");
            await using var node = new ZlinkSpotNode(context, SpotTests.FastNode());
            node.Bind("tcp://127.0.0.1:*");
            await node.ConnectRegistryAsync(router);
            await node.RegisterAsync(cancellationToken: Wait.Token);
            await using var discovery = new ZlinkDiscovery(context, ServiceType.Spot);
            await discovery.ConnectRegistryAsync(pub);
            await node.SetDiscoveryAsync(discovery);
            await using ZlinkSpotSubscriber sub = node.CreateSubscriber();
            sub.Subscribe("ref.exact");
            sub.Subscribe("ref.sync");
            sub.Subscribe("ref.end");
            sub.SubscribePattern("ref.pat:*");
            using ZlinkSpotPublisher publisher = node.CreatePublisher();

            // NetZlink to the peer: probe until its subscriptions reached us, then the batch.
            using (var synced = new CancellationTokenSource())
            {
                Task probing = Task.Run(async () =>
                {
                    while (!synced.IsCancellationRequested)
                    {
                        publisher.Publish("net.sync", "sync"u8);
                        await Task.Delay(20, CancellationToken.None);
                    }
                });
                await peer.LineAsync("SYNC");
                await synced.CancelAsync();
                await probing;
            }

            for (int i = 0; i < count; i++)
            {
                publisher.Publish("net.exact", System.Text.Encoding.UTF8.GetBytes($"e-{i}"));
                publisher.Publish($"net.pat:{i}", System.Text.Encoding.UTF8.GetBytes($"p-{i}"));
                publisher.Publish("net.nope", System.Text.Encoding.UTF8.GetBytes($"x-{i}"));
            }

            publisher.Publish("net.end", "end"u8);
            TestContext.Out.WriteLine($"published {count} x 3 and net.end; peers {string.Join(',', node.Peers)}");
            Assert.That(await peer.LineAsync("GOT"), Is.EqualTo($"GOT exact={count} pattern={count} other=0"));

            // The peer to NetZlink: its probes arrive once our subscriptions reached it; then GO.
            while (true)
            {
                using SpotMessage m = await sub.ReceiveAsync(Wait.Token);
                if (m.Topic == "ref.sync")
                {
                    break;
                }
            }

            await peer.WriteLineAsync("GO");
            int exact = 0, pattern = 0, other = 0;
            while (true)
            {
                using SpotMessage m = await sub.ReceiveAsync(Wait.Token);
                string body = System.Text.Encoding.UTF8.GetString(m[0]);
                if (m.Topic == "ref.end")
                {
                    break;
                }

                if (m.Topic == "ref.sync")
                {
                    continue;
                }

                if (m.Topic == "ref.exact" && body == $"e-{exact}")
                {
                    exact++;
                }
                else if (m.Topic == $"ref.pat:{pattern}" && body == $"p-{pattern}")
                {
                    pattern++;
                }
                else
                {
                    TestContext.Out.WriteLine($"unexpected {m.Topic} {body}");
                    other++;
                }
            }

            Assert.That((exact, pattern, other), Is.EqualTo((count, count, 0)), "from the peer: every match once, in order, nothing else");
            IReadOnlyList<ReceiverInfo> nodes = discovery.GetReceivers(ZlinkSpotNode.DefaultServiceName);
            Assert.That(nodes, Has.Count.EqualTo(2), "both nodes listed as SPOT services");
            Assert.That(nodes.Select(n => n.RoutingId.Length), Is.All.EqualTo(4), "SPOT node ids are 4 bytes");
            await peer.FinishAsync();
            Assert.That(node.RefusedMessages + discovery.RefusedMessages, Is.Zero, node.LastRefusal ?? discovery.LastRefusal);
        }
        finally
        {
            if (ours is not null)
            {
                await ours.DisposeAsync();
            }

            if (theirs is not null)
            {
                await theirs.FinishAsync();
                await theirs.DisposeAsync();
            }
        }
    }
}
