// Opening a monitor on the socket.
namespace NetZlink;

public sealed partial class ZlinkSocket
{
    /// <summary>Opens a monitor that reports this socket's <paramref name="events"/>.</summary>
    /// <param name="events">Which events to report.</param>
    /// <returns>The monitor; dispose it when done (disposing the context also closes it). Its HandshakeFailed events carry <see cref="MonitorEvent.TlsFailure"/>.</returns>
    /// <exception cref="ZlinkException">The native library refused (e.g. ENOTSUP).</exception>
    /// <exception cref="ObjectDisposedException">The socket or its context was disposed.</exception>
    public ZlinkMonitor OpenMonitor(MonitorEvents events = MonitorEvents.All)
    {
        ZlinkMonitor monitor = Context.OpenMonitor(_handle, events);
        monitor.Source = this;
        return monitor;
    }
}
