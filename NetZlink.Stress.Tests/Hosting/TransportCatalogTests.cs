// Transport names and the one answer that needs no native library: tcp is always there.
using NetZlink.Stress.Hosting;

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
}
