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

    /// <summary>
    /// Watches this socket's connections: Connecting, Connected (handshake done), Disconnected with a
    /// reason, Retrying, and a last Closed when the socket, its context or the watcher is closed.
    /// Built on one monitor of this socket read by a thread of the watcher.
    /// </summary>
    /// <returns>The watcher; dispose it to stop watching (closing the socket stops it too).</returns>
    /// <exception cref="ZlinkException">The native library refused the monitor (e.g. ENOTSUP).</exception>
    /// <exception cref="ObjectDisposedException">The socket or its context was disposed.</exception>
    public ZlinkConnectionWatcher WatchConnections() => new(this);
}
