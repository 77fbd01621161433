// Raw declarations: socket monitors and peer introspection (STREAM sockets).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe partial class NativeMethods
{
    [LibraryImport(LibraryName)]
    internal static partial nint zlink_socket_monitor_open(nint s, int events);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_monitor_recv(nint monitor, ZlinkMonitorEvent* ev, int flags);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_socket_peer_count(nint s);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_socket_peer_routing_id(nint s, int index, ZlinkRoutingId* routingId);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_socket_peer_info(nint s, ZlinkRoutingId* routingId, ZlinkPeerInfo* info);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_socket_peers(nint s, ZlinkPeerInfo* peers, nuint* count);
}
