// Owns a zlink socket and keeps its context alive: the context reference taken at creation is
// given back only after zlink_close, so zlink_ctx_term never waits on a socket we still hold.
// ReleaseHandle only closes (the binding sets LINGER 0 at creation, so close never lingers) and
// never terminates anything itself, which keeps it safe on the finalizer thread.
//
// A socket is for one thread at a time, and the binding enforces it: every call through the
// public Socket API (and a Poller's wait) takes the socket's owner word with one compare-exchange
// on entry, from 0 to the calling thread's managed id, and gives it back with a plain release
// store on exit. A thread that finds the word taken is refused at once with an
// InvalidOperationException naming the socket and the operation, before it reaches the native
// socket (libzmq sockets are not thread-safe: two threads inside one corrupt its memory). One
// uncontended compare-exchange per call (SocketLease; the cost is in benchmarks/README.md).
//
// Dispose, which may come from any thread at any time, sets the closing flag and issues a
// process-wide memory barrier (Interlocked.MemoryBarrierProcessWide, membarrier(2) on Linux)
// before it looks at the owner word. A caller's entry is a full fence (the compare-exchange) before
// it reads the flag, so either Dispose sees the caller inside or the caller sees the flag and
// backs out with ObjectDisposedException. The caller's exit (a release store, then a read of the
// flag) has no fence of its own: the barrier orders that store and load as a full fence would, at
// a point somewhere in the caller's instruction stream, so either Dispose sees the word free, or
// the caller's load comes after the barrier and sees the flag. Whoever sees "closing and no call
// inside" last performs the close; a compare-exchange on that rare path makes it happen once. The
// barrier's cost (a few microseconds) stays with Dispose, which is rare.
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed class SocketHandle : SafeHandle
{
    private readonly ContextHandle _context;

    // 0 while no call is in progress, else the managed thread id of the thread inside a call.
    // Taken with a compare-exchange by EnterCall, given back by ExitCall; read by Dispose.
    private int _owner;

    // 1 once Dispose began: new calls are refused, the close waits for the call in progress.
    private int _closing;

    // 1 once someone has started the actual close, so it happens exactly once.
    private int _closeClaimed;

    // The last endpoint bound or connected, named in the refusal of an overlapping call.
    private string? _endpoint;

    /// <summary>Takes over a reference the caller already holds on <paramref name="context"/>.</summary>
    internal SocketHandle(nint socket, ContextHandle context, SocketType type)
        : base(0, ownsHandle: true)
    {
        _context = context;
        Type = type;
        SetHandle(socket);
        HandleTracker.Opened(NativeHandleKind.Socket);
    }

    public override bool IsInvalid => handle == 0;

    /// <summary>The kind of socket, named in the refusal of an overlapping call.</summary>
    internal SocketType Type { get; }

    /// <summary>The last endpoint bound or connected (set by the thread inside a call), named in the refusal of an overlapping call.</summary>
    internal string? Endpoint
    {
        get => Volatile.Read(ref _endpoint);
        set => Volatile.Write(ref _endpoint, value);
    }

    /// <summary>True once Dispose began, even while a call in progress still defers the close.</summary>
    internal bool IsClosing => Volatile.Read(ref _closing) != 0 || IsClosed;

    /// <summary>True when the calling thread is inside a call on the socket (a Poller holding one socket in two items).</summary>
    internal bool IsHeldByCurrentThread => Volatile.Read(ref _owner) == Environment.CurrentManagedThreadId;

    /// <summary>
    /// Takes the socket for one call and returns the native pointer, valid until <see cref="ExitCall"/>.
    /// Throws InvalidOperationException when another call is in progress (naming
    /// <paramref name="operation"/>), and ObjectDisposedException once Dispose began.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal nint EnterCall(string operation)
    {
        int owner = Interlocked.CompareExchange(ref _owner, Environment.CurrentManagedThreadId, 0);
        if (owner != 0)
        {
            RefuseOverlap(operation, owner);
        }

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
        Volatile.Write(ref _owner, 0);
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
        if (Volatile.Read(ref _owner) == 0 && Interlocked.Exchange(ref _closeClaimed, 1) == 0)
        {
            // SafeHandle's own reference count, where someone holds one, still defers the release.
            base.Dispose(true);
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefuseCall()
    {
        ExitCall();
        HandleLease.ThrowDisposed(nameof(Socket));
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefuseOverlap(string operation, int owner)
    {
        if (Volatile.Read(ref _closing) != 0)
        {
            HandleLease.ThrowDisposed(nameof(Socket));
        }

        string name = Endpoint is string endpoint ? $"{Type.ToString().ToUpperInvariant()} {Utf8Z.Printable(endpoint)}" : Type.ToString().ToUpperInvariant();
        string who = owner == Environment.CurrentManagedThreadId
            ? "is in use by a call in progress on this same thread (refused " + operation + ": a socket call made from inside another one, e.g. from a message release callback)"
            : $"is in use by another thread ({operation} refused: managed thread {owner} is inside a call on it)";
        throw new InvalidOperationException(
            $"Socket({name}) {who}. Use a socket from one thread at a time; only Dispose may be called from any thread.");
    }
}
