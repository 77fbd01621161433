// Native's context, monitor, peer-table and library calls (see Native.Socket.cs for what the proxy is).
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

internal static unsafe partial class Native
{
    [MethodImpl(Inline)]
    internal static nint ContextNew() => NativeMethods.zlink_ctx_new();

    [MethodImpl(Inline)]
    internal static int ContextShutdown(nint context) => NativeMethods.zlink_ctx_shutdown(context);

    [MethodImpl(Inline)]
    internal static int ContextSet(nint context, int option, int value) => NativeMethods.zlink_ctx_set(context, option, value);

    [MethodImpl(Inline)]
    internal static int ContextGet(nint context, int option) => NativeMethods.zlink_ctx_get(context, option);

    [MethodImpl(Inline)]
    internal static void Version(int* major, int* minor, int* patch) => NativeMethods.zlink_version(major, minor, patch);

    [MethodImpl(Inline)]
    internal static int Has(byte* capabilityUtf8Nul) => NativeMethods.zlink_has(capabilityUtf8Nul);

    [MethodImpl(Inline)]
    internal static nint MonitorOpen(nint socket, int events) => NativeMethods.zlink_socket_monitor_open(socket, events);

    [MethodImpl(Inline)]
    internal static int MonitorReceive(nint monitor, ZlinkMonitorEvent* ev, int flags) => NativeMethods.zlink_monitor_recv(monitor, ev, flags);

    [MethodImpl(Inline)]
    internal static int PeerCount(nint socket) => NativeMethods.zlink_socket_peer_count(socket);

    [MethodImpl(Inline)]
    internal static int PeerRoutingId(nint socket, int index, ZlinkRoutingId* routingId) =>
        NativeMethods.zlink_socket_peer_routing_id(socket, index, routingId);

    [MethodImpl(Inline)]
    internal static int PeerInfo(nint socket, ZlinkRoutingId* routingId, ZlinkPeerInfo* info) =>
        NativeMethods.zlink_socket_peer_info(socket, routingId, info);

    [MethodImpl(Inline)]
    internal static int Peers(nint socket, ZlinkPeerInfo* peers, nuint* count) => NativeMethods.zlink_socket_peers(socket, peers, count);
}
