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
    public void TheDotnetStackRunsTcpOnlyAndSaysSoForTls()
    {
        Assert.Multiple(() =>
        {
            Assert.That(TransportCatalog.UnavailableReason("tcp", StackNames.Dotnet), Is.Null);
            Assert.That(TransportCatalog.UnavailableReason("tls", StackNames.Dotnet), Is.EqualTo("transport tls: the dotnet stack has no tls yet (tcp only)"));
            Assert.That(TransportCatalog.UnavailableReason("ws", StackNames.Dotnet), Is.EqualTo("transport ws is not implemented by the dotnet stack (tcp only)"));
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void TheNetzlinkStackRunsWhatTheLibraryHas()
    {
        Assert.Multiple(() =>
        {
            Assert.That(TransportCatalog.UnavailableReason("tcp", StackNames.Netzlink), Is.Null);
            Assert.That(TransportCatalog.IsAvailable("tls"), Is.EqualTo(ZlinkLibrary.Has("tls")));
            Assert.That(TransportCatalog.UnavailableReason("tls", StackNames.Netzlink),
                ZlinkLibrary.Has("tls") ? Is.Null : Is.EqualTo("transport tls is not available in this native library"));

            // The native library has no WebSocket transport: ws and wss stay SKIPped with this reason.
            Assert.That(TransportCatalog.UnavailableReason("ws", StackNames.Netzlink), Is.EqualTo("transport ws is not available in this native library"));
            Assert.That(TransportCatalog.UnavailableReason("wss", StackNames.Netzlink), Is.EqualTo("transport wss is not available in this native library"));
        });
    }
}
