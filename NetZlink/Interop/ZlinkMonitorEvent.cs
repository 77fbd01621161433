// zlink_monitor_event_t: what zlink_monitor_recv fills (784 bytes).
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct ZlinkMonitorEvent
{
    public ulong Event;
    public ulong Value;
    public ZlinkRoutingId RoutingId;
    public fixed byte LocalAddress[256];
    public fixed byte RemoteAddress[256];
}
