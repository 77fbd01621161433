// Owns a monitor opened with zlink_socket_monitor_open (closed with zlink_close). Like a socket,
// it keeps the context alive until it is closed.
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed class MonitorHandle : SafeHandle
{
    private readonly ContextHandle _context;

    /// <summary>Takes over a reference the caller already holds on <paramref name="context"/>.</summary>
    internal MonitorHandle(nint monitor, ContextHandle context)
        : base(0, ownsHandle: true)
    {
        _context = context;
        SetHandle(monitor);
        HandleTracker.Opened(NativeHandleKind.Monitor);
    }

    public override bool IsInvalid => handle == 0;

    protected override bool ReleaseHandle()
    {
        _ = NativeMethods.zlink_close(handle);
        HandleTracker.Closed(NativeHandleKind.Monitor);
        _context.DangerousRelease();
        return true;
    }
}
