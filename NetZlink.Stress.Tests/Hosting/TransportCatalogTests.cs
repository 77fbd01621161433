// Transport names and the one answer that needs no native library: tcp is always there.
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Scenarios;

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
    public void BothDotnetEndsRunTcpAndTls()
    {
        Assert.Multiple(() =>
        {
            Assert.That(TransportCatalog.DotnetSupports("tcp", DotnetEnd.Client), Is.True);
            Assert.That(TransportCatalog.DotnetSupports("tls", DotnetEnd.Client), Is.True);
            Assert.That(TransportCatalog.DotnetSupports("wss", DotnetEnd.Client), Is.False);
            Assert.That(TransportCatalog.DotnetSupports("tls", DotnetEnd.Server), Is.True);
            Assert.That(TransportCatalog.DotnetSupports("ws", DotnetEnd.Server), Is.False);
            Assert.That(TransportCatalog.ServerUnavailableReason("tcp", StackNames.Dotnet), Is.Null);
            Assert.That(TransportCatalog.ServerUnavailableReason("tls", StackNames.Dotnet), Is.Null);
            Assert.That(TransportCatalog.ServerUnavailableReason("ws", StackNames.Dotnet),
                Is.EqualTo("transport ws is not implemented by the dotnet stack (its server runs tcp and tls)"));
            Assert.That(TransportCatalog.DotnetUnavailableReason("wss", DotnetEnd.Client),
                Is.EqualTo("transport wss is not implemented by the dotnet stack (its client runs tcp and tls)"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheNetzlinkStackRunsWhatTheLibraryHas()
    {
        Assert.Multiple(() =>
        {
            Assert.That(TransportCatalog.ServerUnavailableReason("tcp", StackNames.Netzlink), Is.Null);
            Assert.That(TransportCatalog.IsAvailable("tls"), Is.EqualTo(ZlinkLibrary.Has("tls")));
            Assert.That(TransportCatalog.ServerUnavailableReason("tls", StackNames.Netzlink),
                ZlinkLibrary.Has("tls") ? Is.Null : Is.EqualTo("transport tls is not available in this native library"));

            // The native library has no WebSocket transport: ws and wss stay SKIPped with this reason.
            Assert.That(TransportCatalog.ServerUnavailableReason("ws", StackNames.Netzlink), Is.EqualTo("transport ws is not available in this native library"));
            Assert.That(TransportCatalog.ServerUnavailableReason("wss", StackNames.Netzlink), Is.EqualTo("transport wss is not available in this native library"));
        });
    }
}
