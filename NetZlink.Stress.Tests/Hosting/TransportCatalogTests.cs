// Transport names and the one answer that needs no native library: tcp is always there.

namespace NetZlink.Stress.Tests.Hosting;

[TestFixture]
public sealed class TransportCatalogTests
{
    [Test]
    [CancelAfter(10_000)]
    public void KnowsTheReferenceTransports()
    {
        Assert.That(TransportCatalog.Known, Is.EqualTo(new[] { "tcp", "tls", "ws", "wss" }));
    }

    [TestCase("tcp")]
    [TestCase("TCP")]
    [CancelAfter(10_000)]
    public void TcpIsAlwaysAvailable(string transport)
    {
        Assert.That(TransportCatalog.IsAvailable(transport), Is.True);
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheSkipReasonNamesTheTransport()
    {
        Assert.That(TransportCatalog.UnavailableReason("wss"), Is.EqualTo("transport wss is not available in this native library"));
    }

    [Test]
    [CancelAfter(10_000)]
    public void BothDotnetEndsRunEveryKnownTransport()
    {
        Assert.Multiple(() =>
        {
            foreach (string transport in TransportCatalog.Known)
            {
                Assert.That(TransportCatalog.DotnetSupports(transport, DotnetEnd.Client), Is.True, transport);
                Assert.That(TransportCatalog.DotnetSupports(transport, DotnetEnd.Server), Is.True, transport);
                Assert.That(TransportCatalog.ServerUnavailableReason(transport, StackNames.Dotnet), Is.Null, transport);
            }

            Assert.That(TransportCatalog.DotnetSupports("quic", DotnetEnd.Client), Is.False);
            Assert.That(TransportCatalog.ServerUnavailableReason("quic", StackNames.Dotnet),
                Is.EqualTo("transport quic is not implemented by the dotnet stack (its server runs tcp, tls, ws, wss)"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheNetzlinkStackRunsWhatTheLibraryHas()
    {
        bool ws = ZlinkLibrary.Has("ws");
        bool wss = ws && ZlinkLibrary.Has("tls");
        Assert.Multiple(() =>
        {
            Assert.That(TransportCatalog.ServerUnavailableReason("tcp", StackNames.Netzlink), Is.Null);
            Assert.That(TransportCatalog.IsAvailable("tls"), Is.EqualTo(ZlinkLibrary.Has("tls")));
            Assert.That(TransportCatalog.ServerUnavailableReason("tls", StackNames.Netzlink),
                ZlinkLibrary.Has("tls") ? Is.Null : Is.EqualTo("transport tls is not available in this native library"));
            Assert.That(TransportCatalog.IsAvailable("ws"), Is.EqualTo(ws));
            Assert.That(TransportCatalog.IsAvailable("WSS"), Is.EqualTo(wss), "wss needs both ws and tls");
            Assert.That(TransportCatalog.ServerUnavailableReason("ws", StackNames.Netzlink),
                ws ? Is.Null : Is.EqualTo("transport ws is not available in this native library"));
            Assert.That(TransportCatalog.ServerUnavailableReason("wss", StackNames.Netzlink),
                wss ? Is.Null : Is.EqualTo("transport wss is not available in this native library"));
        });
    }
}
