// Endpoints over tls://, ws:// and wss:// at the engine and the binding: host names in them are
// resolved up front like tcp's (a ws path does not get in the way), and a transport the native
// library lacks is refused before anything opens, with a message naming the zlink_has capability
// (never a bare EPROTONOSUPPORT per connection).
namespace NetZlink.Tests.Engine;

public sealed class EngineTransportTests : EngineFixture
{
    [TestCase("tcp://example.test:80", "example.test")]
    [TestCase("tls://example.test:443", "example.test")]
    [TestCase("ws://example.test:80/chat/room?x=1", "example.test")]
    [TestCase("WSS://example.test:443", "example.test")]
    [TestCase("ws://127.0.0.1:80/path", null)]
    [TestCase("ws://[::1]:80/", null)]
    [TestCase("ws://*:80", null)]
    [TestCase("ipc:///tmp/x", null)]
    [TestCase("ws://nocolon/path", null)]
    [CancelAfter(10_000)]
    public void HostNamesAreFoundInEveryStreamTransport(string endpoint, string? host)
    {
        Assert.That(EndpointHosts.HostName(endpoint), Is.EqualTo(host));
    }

    [Test]
    [CancelAfter(10_000)]
    public void AWsEndpointWhoseNameDoesNotResolveIsOneClearError()
    {
        const string endpoint = "ws://nonexistent.invalid:5555/echo";
        var ex = Assert.Throws<ArgumentException>(() => EndpointHosts.EnsureResolvable([endpoint]));
        Assert.That(ex!.Message, Does.StartWith($"could not resolve host 'nonexistent.invalid' in endpoint {endpoint}: "));
    }

    [TestCase("ws", "ws")]
    [TestCase("wss", "ws")]
    [TestCase("tls", "tls")]
    [CancelAfter(10_000)]
    public void ATransportTheLibraryLacksIsRefusedNamingTheCapability(string scheme, string capability)
    {
        string endpoint = $"{scheme}://127.0.0.1:5555";
        if (ZlinkLibrary.Has(capability))
        {
            Assert.That(EndpointTransports.Missing(endpoint), scheme == "wss" && !ZlinkLibrary.Has("tls") ? Does.Contain("zlink_has(\"tls\")") : Is.Null);
            Assert.Ignore($"the native library has {capability}: nothing to refuse");
        }

        var client = Assert.Throws<ZlinkNotSupportedException>(() => new ClientEngine(2, new EngineOptions { Endpoints = [endpoint] }));
        var server = Assert.Throws<ZlinkNotSupportedException>(() => new ServerEngine(new EngineOptions { Endpoints = [$"{scheme}://127.0.0.1:*"] }));
        using var context = new ZlinkContext();
        using ZlinkSocket socket = context.CreateSocket(ZlinkSocketType.Stream);
        var bind = Assert.Throws<EndpointException>(() => socket.Bind($"{scheme}://127.0.0.1:*"));
        Assert.Multiple(() =>
        {
            Assert.That(client!.Message, Does.Contain($"zlink_has(\"{capability}\") is 0").And.Contain($"{scheme}:// endpoints need"));
            Assert.That(client.Message, Does.Contain(endpoint));
            Assert.That(server!.Message, Does.Contain($"zlink_has(\"{capability}\") is 0"));
            Assert.That(bind!.Errno, Is.EqualTo(ZlinkConstants.EPROTONOSUPPORT));
            Assert.That(bind.Message, Does.Contain($"zlink_has(\"{capability}\") is 0"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TcpAndOtherTransportsNeedNoCapabilityCheck()
    {
        Assert.Multiple(() =>
        {
            Assert.That(EndpointTransports.Missing("tcp://127.0.0.1:1"), Is.Null);
            Assert.That(EndpointTransports.Missing("inproc://x"), Is.Null);
            Assert.That(EndpointTransports.Missing("no scheme"), Is.Null);
            Assert.That(EndpointTransports.Scheme("WS://h:1"), Is.EqualTo("ws"));
        });
    }
}
