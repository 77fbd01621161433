// The native boundary stays internal and matches the C ABI's layouts.
using System.Runtime.CompilerServices;
using NetZlink.Interop;

namespace NetZlink.Tests.Interop;

[TestFixture]
public sealed class InteropLayerTests
{
    [Test]
    public void NothingPublic_LivesInTheInteropNamespace()
    {
        Type[] exposed = typeof(ZlinkContext).Assembly.GetExportedTypes()
            .Where(t => t.Namespace is not null && t.Namespace.StartsWith("NetZlink.Interop", StringComparison.Ordinal))
            .ToArray();
        Assert.That(exposed, Is.Empty, "types of NetZlink.Interop must stay internal");
    }

    [Test]
    public unsafe void Structs_HaveTheAbisSizes()
    {
        Assert.Multiple(() =>
        {
            Assert.That(sizeof(ZlinkMsg), Is.EqualTo(64), "zlink_msg_t");
            Assert.That(sizeof(ZlinkPollItem), Is.EqualTo(16), "zlink_pollitem_t");
            Assert.That(sizeof(ZlinkRoutingId), Is.EqualTo(256), "zlink_routing_id_t");
            Assert.That(sizeof(ZlinkMonitorEvent), Is.EqualTo(784), "zlink_monitor_event_t");
            Assert.That(sizeof(ZlinkPeerInfo), Is.EqualTo(536), "zlink_peer_info_t");
            Assert.That(Unsafe.SizeOf<ZlinkMsg>() % sizeof(nint), Is.Zero);
        });
    }

    [Test]
    public void ErrorEnum_MatchesTheConstants()
    {
        Assert.Multiple(() =>
        {
            Assert.That((int)ZlinkError.EAGAIN, Is.EqualTo(ZlinkConstants.EAGAIN));
            Assert.That((int)ZlinkError.EHOSTUNREACH, Is.EqualTo(ZlinkConstants.EHOSTUNREACH));
            Assert.That((int)ZlinkError.ETERM, Is.EqualTo(ZlinkConstants.ETERM));
            Assert.That((int)ZlinkError.ENOTSUP, Is.EqualTo(ZlinkConstants.EOPNOTSUPP));
            Assert.That((int)SocketOption.SendHighWaterMark, Is.EqualTo(ZlinkConstants.ZLINK_SNDHWM));
            Assert.That((int)SocketOption.ConnectRoutingId, Is.EqualTo(ZlinkConstants.ZLINK_CONNECT_ROUTING_ID));
            Assert.That((int)ZlinkSocketType.Stream, Is.EqualTo(ZlinkConstants.ZLINK_STREAM));
        });
    }
}
