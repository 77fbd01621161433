// zlink_peer_info_t: one connected peer of a STREAM socket (536 bytes).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct ZlinkPeerInfo
{
    public ZlinkRoutingId RoutingId;
    public fixed byte RemoteAddress[256];
    public ulong ConnectedTimeMs;
    public ulong MessagesSent;
    public ulong MessagesReceived;
}
