// The netzlink echo server (--role server) in-process, against plain .NET peers: it echoes whole
// packets ([u32 BE length][body], cut by the native library), so a packet whose last byte comes
// 0.3 s after the rest is echoed whole, at once, when that byte arrives, and nothing of it before;
// over tcp and ws (whose bound endpoint a real zlink reports with a trailing slash). And the one
// parser of endpoints the tool has (HostPort).
namespace NetZlink.Stress.Tests.Scenarios;

[TestFixture]
public sealed class EchoServerTests
{
    [TestCase("tcp")]
    [TestCase("ws")]
    [CancelAfter(30_000)]
    public async Task APacketWhoseLastByteComesLateIsEchoedWholeAtOnce(string transport, CancellationToken cancellationToken)
    {
        if (!TransportCatalog.IsAvailable(transport))
        {
            Assert.Ignore($"the native library has no {transport} ({TransportCatalog.UnavailableReason(transport)})");
        }

        using var server = new EchoServer(new ScenarioSettings { Port = 0, Transport = transport });
        server.Start();
        using var client = new TcpClient { NoDelay = true };
        await client.ConnectAsync(IPAddress.Loopback, server.Port, cancellationToken);
        Stream stream = client.GetStream();
        if (transport == "ws")
        {
            stream = new WebSocketByteStream(await WebSocketHandshake.ConnectAsync(stream, "127.0.0.1", WebSocketHandshake.DefaultPath, cancellationToken));
        }

        await using (stream)
        {
            byte[] packet = [0, 0, 0, 12, .. "late arrival"u8];
            await stream.WriteAsync(packet.AsMemory(0, packet.Length - 1), cancellationToken);
            byte[] buffer = new byte[256];
            Task<int> read = stream.ReadAsync(buffer, cancellationToken).AsTask();
            Assert.That(await Task.WhenAny(read, Task.Delay(300, cancellationToken)), Is.Not.SameAs(read), "nothing is echoed while the packet is incomplete");

            var clock = Stopwatch.StartNew();
            await stream.WriteAsync(packet.AsMemory(packet.Length - 1), cancellationToken);
            int first = await read.WaitAsync(TimeSpan.FromSeconds(10), cancellationToken);
            TestContext.Out.WriteLine($"{transport}: {first} bytes {clock.Elapsed.TotalMilliseconds:0.0} ms after the last byte");
            Assert.Multiple(() =>
            {
                Assert.That(buffer.AsSpan(0, first).ToArray(), Is.EqualTo(packet), "the whole packet, in the first read");
                Assert.That(clock.Elapsed, Is.LessThan(TimeSpan.FromMilliseconds(250)), "echoed as soon as the last byte is in");
                Assert.That(server.BytesEchoed, Is.EqualTo(packet.Length));
                Assert.That(server.Fault, Is.Null);
            });
        }
    }

    [TestCase("tcp://127.0.0.1:27110", "127.0.0.1", 27110)]
    [TestCase("ws://127.0.0.1:27750/", "127.0.0.1", 27750)]
    [TestCase("wss://localhost:443/some/path", "localhost", 443)]
    [TestCase("tcp://[::1]:5555", "[::1]", 5555)]
    [TestCase("example.org:80", "example.org", 80)]
    [TestCase("[fe80::1]:9", "[fe80::1]", 9)]
    public void HostPortSplitsEveryFormOfEndpoint(string text, string host, int port)
    {
        HostPort parsed = HostPort.Parse(text);
        Assert.That(parsed, Is.EqualTo(new HostPort(host, port)));
        Assert.That(parsed.BareHost, Is.EqualTo(host.Trim('[', ']')));
    }

    [TestCase("")]
    [TestCase("127.0.0.1")]
    [TestCase("tcp://127.0.0.1:")]
    [TestCase("host:27750/")]
    [TestCase(":80")]
    [TestCase("tcp://127.0.0.1:port/")]
    public void HostPortRefusesWhatIsNotAnEndpoint(string text)
    {
        Assert.That(HostPort.TryParse(text, out _), Is.False);
        Assert.That(() => HostPort.Parse(text), Throws.InstanceOf<FormatException>().With.Message.Contains(text.Length == 0 ? "''" : text));
    }
}
