// Reads the events of one socket's monitor (zlink_socket_monitor_open / zlink_monitor_recv).
//
// The receive-with-timeout loop polls with short sleeps rather than zlink_poll: the monitor
// handle is opaque in the ABI (a libzmq-style PAIR socket in one library, something else in
// another), so the only call it is guaranteed to accept is zlink_monitor_recv.
using NetZlink.Interop;

namespace NetZlink;

/// <summary>
/// Delivers the events of a socket, opened by <see cref="ZlinkSocket.OpenMonitor"/>. Use it from one
/// thread at a time; <see cref="Dispose"/> may be called from any thread.
/// </summary>
public sealed unsafe class ZlinkMonitor : IDisposable
{
    private const int MaxSleepMilliseconds = 10;

    private readonly ZlinkContext _context;
    private readonly MonitorHandle _handle;
    private volatile bool _disposedByUser;

    internal ZlinkMonitor(ZlinkContext context, MonitorHandle handle)
    {
        _context = context;
        _handle = handle;
    }

    /// <summary>The socket this monitor watches, when it was opened from one: asked for the reason of a failed TLS handshake.</summary>
    internal ZlinkSocket? Source { get; set; }

    /// <summary>Reads the next event if one is pending.</summary>
    /// <param name="monitorEvent">The event; default when none was pending.</param>
    /// <returns>True when an event was read.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ObjectDisposedException">The monitor was disposed.</exception>
    public bool TryReceive(out MonitorEvent monitorEvent)
    {
        using var monitor = HandleLease.Acquire(_handle, nameof(ZlinkMonitor));
        ZlinkMonitorEvent native = default;
        if (Native.MonitorReceive(monitor.Value, &native, ZlinkConstants.ZLINK_DONTWAIT) >= 0)
        {
            const MonitorEvents handshakeFailed = MonitorEvents.HandshakeFailedAuth | MonitorEvents.HandshakeFailedProtocol | MonitorEvents.HandshakeFailedNoDetail;
            string? tls = ((MonitorEvents)native.Event & handshakeFailed) != 0 ? Source?.TryDescribeTlsFailure() : null;
            monitorEvent = new MonitorEvent(&native, tls);
            return true;
        }

        int errno = Native.Errno();
        if (!Native.IsRetry(errno))
        {
            Ensure.Throw(errno, "Monitor.TryReceive");
        }

        monitorEvent = default;
        return false;
    }

    /// <summary>Reads the next event, waiting up to <paramref name="timeout"/> for it.</summary>
    /// <param name="monitorEvent">The event; default when none came.</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <returns>True when an event was read; false when the timeout elapsed first.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down, or disposed while the call waited.</exception>
    /// <exception cref="ObjectDisposedException">The monitor was disposed (by its owner, or by the context before the call).</exception>
    public bool TryReceive(out MonitorEvent monitorEvent, TimeSpan timeout)
    {
        var deadline = Deadline.After(timeout);
        int sleep = 1;
        if (TryReceive(out monitorEvent))
        {
            return true;
        }

        while (true)
        {
            int remaining = deadline.RemainingMilliseconds();
            if (remaining == 0)
            {
                return false;
            }

            Thread.Sleep(remaining < 0 ? sleep : Math.Min(sleep, remaining));
            sleep = Math.Min(sleep * 2, MaxSleepMilliseconds);
            try
            {
                if (TryReceive(out monitorEvent))
                {
                    return true;
                }
            }
            catch (ObjectDisposedException) when (!_disposedByUser && _context.IsDisposed)
            {
                // ZlinkContext.Dispose closed the monitor while this call waited: the answer a socket
                // gives when its context goes away under a blocked receive.
                throw (ContextTerminatedException)Ensure.Create(
                    ZlinkConstants.ETERM, ErrorScope.General, "Monitor.Receive", null, "the ZlinkContext was disposed while the call waited");
            }
        }
    }

    /// <summary>Reads the next event, blocking until one arrives.</summary>
    /// <returns>The event.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down, or disposed while the call waited.</exception>
    public MonitorEvent Receive()
    {
        TryReceive(out MonitorEvent monitorEvent, Timeout.InfiniteTimeSpan);
        return monitorEvent;
    }

    /// <summary>Reads the next event of type <paramref name="wanted"/>, skipping others, for up to <paramref name="timeout"/>.</summary>
    /// <param name="wanted">The event types to wait for.</param>
    /// <param name="timeout">How long to wait in total.</param>
    /// <param name="monitorEvent">The event found; default when none came.</param>
    /// <returns>True when such an event was read.</returns>
    public bool TryReceive(MonitorEvents wanted, TimeSpan timeout, out MonitorEvent monitorEvent)
    {
        var deadline = Deadline.After(timeout);
        while (true)
        {
            int remaining = deadline.RemainingMilliseconds();
            TimeSpan left = remaining < 0 ? Timeout.InfiniteTimeSpan : TimeSpan.FromMilliseconds(remaining);
            if (!TryReceive(out monitorEvent, left))
            {
                break;
            }

            if ((monitorEvent.EventType & wanted) != 0)
            {
                return true;
            }
        }

        monitorEvent = default;
        return false;
    }

    /// <summary>Closes the monitor. Idempotent and safe from any thread.</summary>
    public void Dispose()
    {
        _disposedByUser = true;
        _context.Forget(_handle);
        _handle.Dispose();
    }
}
