// Owns a zlink socket and keeps its context alive: the context reference taken at creation is
// given back only after zlink_close, so zlink_ctx_term never waits on a socket we still hold.
// ReleaseHandle only closes (the binding sets LINGER 0 at creation, so close never lingers) and
// never terminates anything itself, which keeps it safe on the finalizer thread.
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed class SocketHandle : SafeHandle
{
    private readonly ContextHandle _context;

    /// <summary>Takes over a reference the caller already holds on <paramref name="context"/>.</summary>
    internal SocketHandle(nint socket, ContextHandle context)
        : base(0, ownsHandle: true)
    {
        _context = context;
        SetHandle(socket);
        HandleTracker.Opened(NativeHandleKind.Socket);
    }

    public override bool IsInvalid => handle == 0;

    protected override bool ReleaseHandle()
    {
        _ = NativeMethods.zlink_close(handle);
        HandleTracker.Closed(NativeHandleKind.Socket);
        _context.DangerousRelease();
        return true;
    }
}
