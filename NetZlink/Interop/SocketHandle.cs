// Owns a zlink socket and keeps its context alive: the context reference taken at creation is
// given back only after zlink_close, so zlink_ctx_term never waits on a socket we still hold.
// ReleaseHandle only closes (the binding sets LINGER 0 at creation, so close never lingers) and
// never terminates anything itself, which keeps it safe on the finalizer thread.
//
// Calls through the public Socket API do not take SafeHandle references (two interlocked
// compare-exchange loops per call, measured at 14-19 ns of a ~150 ns inproc send+receive).
// A socket is used by one thread at a time, so the calling side needs no atomic operation: it
// marks itself inside a call with a plain store, then reads the closing flag. Dispose, which may
// come from any thread, sets the flag and issues a process-wide memory barrier
// (Interlocked.MemoryBarrierProcessWide, membarrier(2) on Linux) before it looks at the mark. The
// barrier orders the caller's store and load as a full fence would, at a point somewhere in the
// caller's instruction stream: either the caller's mark is visible to Dispose (which then leaves
// the close to the caller's exit), or the caller's load comes after the barrier and sees the flag
// (and the caller backs out with ObjectDisposedException). Whoever sees "closing and no call
// inside" last performs the close; a compare-exchange on that rare path makes it happen once.
// The cost moves to Dispose (a few microseconds), which is rare.
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed class SocketHandle : SafeHandle
{
    private readonly ContextHandle _context;

    // Calls in progress. Written only by the thread using the socket (one at a time); read by Dispose.
    private int _calls;

    // 1 once Dispose began: new calls are refused, the close waits for the call in progress.
    private int _closing;

    // 1 once someone has started the actual close, so it happens exactly once.
    private int _closeClaimed;

    /// <summary>Takes over a reference the caller already holds on <paramref name="context"/>.</summary>
    internal SocketHandle(nint socket, ContextHandle context)
        : base(0, ownsHandle: true)
    {
        _context = context;
        SetHandle(socket);
        HandleTracker.Opened(NativeHandleKind.Socket);
    }

    public override bool IsInvalid => handle == 0;

    /// <summary>True once Dispose began, even while a call in progress still defers the close.</summary>
    internal bool IsClosing => Volatile.Read(ref _closing) != 0 || IsClosed;

    /// <summary>
    /// Marks a call in progress and returns the native pointer, valid until <see cref="ExitCall"/>.
    /// Only for the thread that uses the socket; throws ObjectDisposedException once Dispose began.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal nint EnterCall()
    {
        Volatile.Write(ref _calls, _calls + 1);
        if (Volatile.Read(ref _closing) != 0)
        {
            RefuseCall();
        }

        return handle;
    }

    /// <summary>Ends the call begun by <see cref="EnterCall"/>; performs a close Dispose deferred.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ExitCall()
    {
        Volatile.Write(ref _calls, _calls - 1);
        if (Volatile.Read(ref _closing) != 0)
        {
            CloseIfIdle();
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (!disposing)
        {
            // The finalizer: nothing can be inside a call on an unreachable socket.
            base.Dispose(disposing);
            return;
        }

        if (Interlocked.Exchange(ref _closing, 1) != 0)
        {
            return;
        }

        Interlocked.MemoryBarrierProcessWide();
        CloseIfIdle();
    }

    protected override bool ReleaseHandle()
    {
        _ = NativeMethods.zlink_close(handle);
        HandleTracker.Closed(NativeHandleKind.Socket);
        _context.DangerousRelease();
        return true;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CloseIfIdle()
    {
        if (Volatile.Read(ref _calls) == 0 && Interlocked.Exchange(ref _closeClaimed, 1) == 0)
        {
            // SafeHandle's own reference count still defers the release past a Poller's wait.
            base.Dispose(true);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefuseCall()
    {
        ExitCall();
        HandleLease.ThrowDisposed(nameof(Socket));
    }
}
