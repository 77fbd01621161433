// One public Socket call's hold on its native socket: another thread's call meanwhile is refused
// with InvalidOperationException, a concurrent Dispose defers the close until the lease ends, and
// a call after Dispose throws ObjectDisposedException. The protocol (one compare-exchange on
// entry, a plain store on exit) is described in SocketHandle.
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

internal readonly ref struct SocketLease
{
    private readonly SocketHandle _handle;

    private SocketLease(SocketHandle handle, nint value)
    {
        _handle = handle;
        Value = value;
    }

    /// <summary>The native socket pointer, valid until <see cref="Dispose"/>.</summary>
    public nint Value { get; }

    /// <summary>Takes the socket for <paramref name="operation"/> (named if the call is refused).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static SocketLease Acquire(SocketHandle handle, string operation) => new(handle, handle.EnterCall(operation));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Dispose() => _handle.ExitCall();
}
