// Learns why connect attempts failed: the native STREAM socket reports the errno of a failed
// attempt as the value of its CLOSED / CONNECT_RETRIED monitor event, with the routing id.
// Optional: a native library without a monitor on STREAM just leaves the errno unknown (0).
using System.Buffers.Binary;
using NetZlink.Interop;

namespace NetZlink.Engine;

internal sealed unsafe class ConnectErrnoMonitor : IDisposable
{
    private const int EventConnectRetried = 0x4;
    private const int EventClosed = 0x80;
    private const int MaxRemembered = 4096;

    private readonly Dictionary<uint, int> _errnoById = new();
    private nint _monitor;

    private ConnectErrnoMonitor(nint monitor)
    {
        _monitor = monitor;
        HandleTracker.Opened(NativeHandleKind.Monitor);
    }

    /// <summary>A monitor on the socket, or null when the native library cannot give one.</summary>
    internal static ConnectErrnoMonitor? TryOpen(nint socket)
    {
        nint monitor = Native.MonitorOpen(socket, EventConnectRetried | EventClosed);
        return monitor == 0 ? null : new ConnectErrnoMonitor(monitor);
    }

    /// <summary>The errno reported for an attempt's routing id, reading pending events first; 0 when unknown.</summary>
    internal int ErrnoFor(uint routingId)
    {
        Drain();
        return _errnoById.Remove(routingId, out int errno) ? errno : 0;
    }

    public void Dispose()
    {
        if (_monitor != 0)
        {
            _ = Native.Close(_monitor);
            _monitor = 0;
            HandleTracker.Closed(NativeHandleKind.Monitor);
        }
    }

    private void Drain()
    {
        ZlinkMonitorEvent ev;
        while (_monitor != 0 && Native.MonitorReceive(_monitor, &ev, ZlinkConstants.ZLINK_DONTWAIT) >= 0)
        {
            if (ev.RoutingId.Size != 4 || (ev.Event & (EventClosed | EventConnectRetried)) == 0 || ev.Value == 0)
            {
                continue;
            }

            if (_errnoById.Count >= MaxRemembered)
            {
                _errnoById.Clear();
            }

            uint id = BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(ev.RoutingId.Data, 4));
            _errnoById[id] = (int)ev.Value;
        }
    }
}
