// Owns a zlink socket and keeps its context alive: the context reference taken at creation is
// given back only after zlink_close, so zlink_ctx_term never waits on a socket we still hold.
// ReleaseHandle only closes (the binding sets LINGER 0 at creation, so close never lingers) and
// never terminates anything itself, which keeps it safe on the finalizer thread.
//
// A socket is for one thread at a time, and the binding enforces it: a call made while another
// thread is inside a call on the socket is refused with InvalidOperationException before it
// reaches the native socket (libzmq sockets are not thread-safe: two threads inside one corrupt
// its memory). Every call through the public API (SocketLease), a ZlinkPoller's wait and OpenMonitor
// take the socket in one of two ways:
//
// - Owner word (slow path): a compare-exchange of _owner from 0 to the caller's managed thread id
//   on entry, a release store of 0 on exit. A thread that finds it taken is refused.
// - Bias (fast path): a locked instruction waits for the core's store buffer to drain, which
//   after a 1 KB receive into a buffer costs more than the rest of the wrapper (benchmarks/README).
//   So the socket is biased to the thread that used it last: a BiasToken naming that thread, set
//   by a thread holding the owner word. That thread marks itself inside with a plain store to the
//   token's InCall, then re-reads _bias and _closing; on exit it clears InCall with a plain
//   store. No atomic operation. Another thread that wants the socket takes the owner word,
//   revokes the bias (_bias = null), issues a process-wide memory barrier
//   (Interlocked.MemoryBarrierProcessWide, membarrier(2) on Linux) and then reads the old token's
//   InCall. The barrier orders the biased thread's store and re-read as a full fence would, at a
//   point somewhere in its instruction stream: either the revoker sees InCall set (the biased
//   thread is inside: the revoker puts the token back and is refused) or the biased thread's
//   re-read sees the bias gone (it clears InCall and takes the slow path). A token is never
//   reused, so a late store of a thread that lost its bias lands on a dead token. The bias is
//   changed only by a thread holding the owner word, and no longer granted after
//   s_maxRevocations (2) revocations: a socket that moves between threads on every call (async
//   code) pays two barriers (microseconds each), then takes the owner word on every call. (A
//   revocation that finds the biased thread inside is concurrent use: it is refused and the
//   bias stays, so each such refusal costs a barrier too.)
//
// Dispose, which may come from any thread at any time, sets the closing flag and issues the same
// process-wide barrier before it looks at the owner word and the bias's InCall: a caller's entry
// reads the flag after its mark (the compare-exchange is a full fence; the plain store is ordered
// by the barrier), so either Dispose sees the caller inside or the caller sees the flag and backs
// out with ObjectDisposedException. A caller's exit (a store, then a read of the flag) is ordered
// by the barrier likewise. The close (CloseIfIdle) happens only once the barrier has completed
// (before it, a biased thread's mark may not be visible yet), by a thread that takes the owner
// word for good and then finds the bias's InCall clear: Dispose itself, or the exit of the call
// it found inside. Full fences on that rare path order two exits against each other. The
// barriers' cost stays with Dispose and revocation.
//
// Async operations (AsyncSocketState) hold the owner word, as AsyncOwner, for as long as one of
// them waits for the socket: every other call is refused meanwhile, and the native calls for the
// waiting operations are ordered by the state's own lock. Taking it always revokes the bias, also
// the calling thread's own, because those calls are made by other threads (the reactor's pool
// work). Dispose ends waiting operations (OnClosing), which gives the owner word back and lets the
// close proceed; the close takes the descriptor out of the reactor first (OnClose).
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed class SocketHandle : SafeHandle
{
    /// <summary>
    /// How many times a socket's bias is revoked before it is no longer granted (read when a
    /// socket is created; tests raise it to revoke on every change of thread).
    /// </summary>
    internal static int s_maxRevocations = 2;

    // _owner of the thread that closes the socket; kept for good, so nothing enters afterwards.
    private const int Closer = -1;

    // _owner while async operations wait for the socket (AsyncSocketState).
    private const int AsyncOwner = -2;

    private readonly ContextHandle _context;

    // The thread the socket is biased to, or null. Changed only by a thread holding _owner.
    private BiasToken? _bias;

    // 0 while no call holds the owner word, else the managed thread id of the thread that does.
    private int _owner;

    // Revocations left before the bias is no longer granted; changed only by a thread holding _owner.
    private int _revocationsLeft = s_maxRevocations;

    // 1 once Dispose began: new calls are refused, the close waits for the call in progress.
    private int _closing;

    // 1 once Dispose's process-wide barrier has completed: only then may anyone close.
    private int _barrierDone;

    // 1 once someone has started the actual close, so it happens exactly once.
    private int _closeClaimed;

    // The last endpoint bound or connected, named in the refusal of an overlapping call.
    private string? _endpoint;

    // The socket's async side, created by the first async call.
    private AsyncSocketState? _async;

    // This thread's managed id, or 0 until read once. Reading it is a call to the runtime's
    // thread-static helper, which measured cheaper than Environment.CurrentManagedThreadId (not
    // inlined either): TwoSocketLeases 4.4-4.7 ns against 5.3-8.7 ns, one noisy pass each.
    [ThreadStatic]
    private static int s_threadId;

    /// <summary>Takes over a reference the caller already holds on <paramref name="context"/>.</summary>
    internal SocketHandle(nint socket, ContextHandle context, ZlinkSocketType type)
        : base(0, ownsHandle: true)
    {
        _context = context;
        Type = type;
        SetHandle(socket);
        HandleTracker.Opened(NativeHandleKind.Socket);
    }

    public override bool IsInvalid => handle == 0;

    /// <summary>The kind of socket, named in the refusal of an overlapping call.</summary>
    internal ZlinkSocketType Type { get; }

    /// <summary>The last endpoint bound or connected (set by the thread inside a call), named in the refusal of an overlapping call.</summary>
    internal string? Endpoint
    {
        get => Volatile.Read(ref _endpoint);
        set => Volatile.Write(ref _endpoint, value);
    }

    /// <summary>True once Dispose began, even while a call in progress still defers the close.</summary>
    internal bool IsClosing => Volatile.Read(ref _closing) != 0 || IsClosed;

    /// <summary>True when the calling thread is inside a call on the socket (a ZlinkPoller holding one socket in two items).</summary>
    internal bool IsHeldByCurrentThread
    {
        get
        {
            int me = Environment.CurrentManagedThreadId;
            return Volatile.Read(ref _owner) == me
                || (Volatile.Read(ref _bias) is { } bias && bias.ThreadId == me && Volatile.Read(ref bias.InCall) != 0);
        }
    }

    /// <summary>The calling thread's managed id (Environment.CurrentManagedThreadId), cached in a thread-static.</summary>
    private static int CurrentThreadId
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            int id = s_threadId;
            return id != 0 ? id : s_threadId = Environment.CurrentManagedThreadId;
        }
    }

    /// <summary>The socket's async side (its two reusable operations and their lock), created once.</summary>
    internal AsyncSocketState Async
    {
        get
        {
            AsyncSocketState? state = Volatile.Read(ref _async);
            if (state is null)
            {
                _ = Interlocked.CompareExchange(ref _async, new AsyncSocketState(this), null);
                state = _async;
            }

            return state!;
        }
    }

    /// <summary>The thread the socket is biased to (0 for none), for tests.</summary>
    internal int BiasedThread => Volatile.Read(ref _bias)?.ThreadId ?? 0;

    /// <summary>
    /// Takes the socket for one call and returns the native pointer, valid until
    /// <see cref="ExitCall"/> with the same <paramref name="bias"/>. Throws
    /// InvalidOperationException when another call is in progress (naming
    /// <paramref name="operation"/>), and ObjectDisposedException once Dispose began.
    /// </summary>
    /// <param name="operation">Named in the refusal.</param>
    /// <param name="bias">The token the call was taken on (the fast path), or null (the owner word).</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal nint EnterCall(string operation, out BiasToken? bias)
    {
        BiasToken? token = _bias;
        if (token is not null && token.ThreadId == CurrentThreadId && token.InCall == 0)
        {
            Volatile.Write(ref token.InCall, 1);
            if (Volatile.Read(ref _bias) == token && Volatile.Read(ref _closing) == 0)
            {
                bias = token;
                return handle;
            }

            LeaveBias(token);
        }

        bias = null;
        return EnterOwned(operation);
    }

    /// <summary>Ends the call begun by <see cref="EnterCall"/>; performs a close Dispose deferred.</summary>
    /// <param name="bias">What <see cref="EnterCall"/> gave.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ExitCall(BiasToken? bias)
    {
        if (bias is not null)
        {
            Volatile.Write(ref bias.InCall, 0);
        }
        else
        {
            Volatile.Write(ref _owner, 0);
        }

        if (Volatile.Read(ref _closing) != 0)
        {
            CloseIfIdle();
        }
    }

    /// <summary>
    /// Takes the owner word for waiting async operations (AsyncSocketState, under its lock); given
    /// back with <c>ExitCall(null)</c>. Refuses like any call when another thread is inside, and
    /// throws ObjectDisposedException once Dispose began. Always revokes the bias (see the top).
    /// </summary>
    internal void EnterAsync(string operation)
    {
        int owner = Interlocked.CompareExchange(ref _owner, AsyncOwner, 0);
        if (owner != 0)
        {
            RefuseOverlap(operation, owner);
        }

        RevokeBias(operation, Environment.CurrentManagedThreadId, revokeOwn: true);
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
        Volatile.Write(ref _barrierDone, 1);
        Volatile.Read(ref _async)?.OnClosing();
        CloseIfIdle();
    }

    protected override bool ReleaseHandle()
    {
        Volatile.Read(ref _async)?.OnClose();
        _ = NativeMethods.zlink_close(handle);
        HandleTracker.Closed(NativeHandleKind.Socket);
        _context.DangerousRelease();
        return true;
    }

    /// <summary>The fast path found the bias revoked or the socket closing: backs out of the token.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void LeaveBias(BiasToken token)
    {
        Volatile.Write(ref token.InCall, 0);
        if (Volatile.Read(ref _closing) != 0)
        {
            CloseIfIdle();
        }
    }

    /// <summary>The slow path: takes the owner word, revokes another thread's bias, grants the bias to this thread when allowed.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private nint EnterOwned(string operation)
    {
        int me = Environment.CurrentManagedThreadId;
        int owner = Interlocked.CompareExchange(ref _owner, me, 0);
        if (owner != 0)
        {
            RefuseOverlap(operation, owner);
        }

        RevokeBias(operation, me, revokeOwn: false);
        if (Volatile.Read(ref _bias) is null && _revocationsLeft > 0)
        {
            Volatile.Write(ref _bias, new BiasToken(me));
        }

        return handle;
    }

    /// <summary>
    /// Holding the owner word: revokes another thread's bias (and this thread's own when
    /// <paramref name="revokeOwn"/>), then refuses (giving the owner word back) when the biased
    /// thread is inside or Dispose began.
    /// </summary>
    private void RevokeBias(string operation, int me, bool revokeOwn)
    {
        BiasToken? bias = Volatile.Read(ref _bias);
        if (bias is not null && (revokeOwn || bias.ThreadId != me))
        {
            Volatile.Write(ref _bias, null);
            _revocationsLeft--;
            Interlocked.MemoryBarrierProcessWide();
        }

        if (bias is not null && Volatile.Read(ref bias.InCall) != 0)
        {
            // The biased thread is inside (or this thread is, when the bias is its own: a call
            // made from inside another one). It keeps the bias.
            Volatile.Write(ref _bias, bias);
            ExitCall(null);
            RefuseOverlap(operation, bias.ThreadId);
        }

        if (Volatile.Read(ref _closing) != 0)
        {
            ExitCall(null);
            HandleLease.ThrowDisposed(nameof(ZlinkSocket));
        }
    }

    /// <summary>
    /// Closes the socket once Dispose began, its barrier completed and no call is inside; otherwise
    /// leaves it to whoever holds the socket, whose exit calls here again.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CloseIfIdle()
    {
        // Before the barrier a biased thread's mark may not be visible yet: Dispose calls here
        // itself once it is done. The fence orders this read after the caller's own release.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _barrierDone) == 0)
        {
            return;
        }

        // Holding the owner word, nobody can change the bias; the biased thread may still be inside.
        while (Interlocked.CompareExchange(ref _owner, Closer, 0) == 0)
        {
            BiasToken? bias = Volatile.Read(ref _bias);
            if (bias is null || Volatile.Read(ref bias.InCall) == 0)
            {
                if (Interlocked.Exchange(ref _closeClaimed, 1) == 0)
                {
                    // SafeHandle's own reference count, where someone holds one, still defers the release.
                    base.Dispose(true);
                }

                return;
            }

            // Its exit closes, unless it left between the read above and this release: look again.
            Volatile.Write(ref _owner, 0);
            Interlocked.MemoryBarrier();
            if (Volatile.Read(ref bias.InCall) != 0)
            {
                return;
            }
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefuseOverlap(string operation, int owner)
    {
        if (Volatile.Read(ref _closing) != 0)
        {
            HandleLease.ThrowDisposed(nameof(ZlinkSocket));
        }

        string name = Endpoint is string endpoint ? $"{Type.ToString().ToUpperInvariant()} {Utf8Z.Printable(endpoint)}" : Type.ToString().ToUpperInvariant();
        if (owner == AsyncOwner)
        {
            throw new InvalidOperationException(
                $"Socket({name}) has an async operation pending ({operation} refused). While a ReceiveAsync or SendAsync waits, "
                + "the socket takes no other call but the other direction's async operation and Dispose; await the pending operation (or cancel it) first.");
        }

        string who = owner == Environment.CurrentManagedThreadId
            ? "is in use by a call in progress on this same thread (refused " + operation + ": a socket call made from inside another one, e.g. from a message release callback)"
            : $"is in use by another thread ({operation} refused: managed thread {owner} is inside a call on it)";
        throw new InvalidOperationException(
            $"Socket({name}) {who}. Use a socket from one thread at a time; only Dispose may be called from any thread.");
    }

    /// <summary>A socket's bias to one thread; never reused once revoked.</summary>
    internal sealed class BiasToken(int threadId)
    {
        /// <summary>The managed thread id the socket is biased to.</summary>
        public readonly int ThreadId = threadId;

        /// <summary>1 while that thread is inside a call taken on this token; written only by that thread.</summary>
        public int InCall;
    }
}
