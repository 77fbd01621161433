// Owns a zlink context. Sockets and monitors hold a reference on it (DangerousAddRef), so the
// release below runs only after every socket and monitor of the context has been closed; at
// that point zlink_ctx_term has nothing to wait for except the linger of messages already
// handed to closed sockets (zero unless the user raised LINGER).
//
// Release policy: zlink_ctx_shutdown first (never blocks). Then, when ZlinkContext.Dispose asked for
// the release, zlink_ctx_term runs inline; when the finalizer got here (nobody disposed the
// context), term runs on a thread-pool thread instead, so a user-set LINGER can never block the
// finalizer thread.
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed class ContextHandle : SafeHandle
{
    private volatile bool _terminateInline;

    internal ContextHandle(nint context)
        : base(0, ownsHandle: true)
    {
        SetHandle(context);
        HandleTracker.Opened(NativeHandleKind.Context);
    }

    public override bool IsInvalid => handle == 0;

    /// <summary>Set by ZlinkContext.Dispose just before it disposes this handle.</summary>
    internal void TerminateInlineOnRelease() => _terminateInline = true;

    protected override bool ReleaseHandle()
    {
        nint context = handle;
        _ = NativeMethods.zlink_ctx_shutdown(context);
        HandleTracker.Closed(NativeHandleKind.Context);
        if (_terminateInline)
        {
            Terminate(context);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(static c => Terminate(c), context, preferLocal: false);
        }

        return true;
    }

    private static void Terminate(nint context)
    {
        // libzmq returns EINTR when a signal interrupts the wait; the documented answer is to call again.
        while (NativeMethods.zlink_ctx_term(context) != 0 && NativeMethods.zlink_errno() == ZlinkConstants.EINTR)
        {
        }
    }
}
