// One public Socket call's hold on its native socket: a concurrent Dispose defers the close until
// the lease ends, and a call after Dispose throws ObjectDisposedException. The protocol (no
// atomic operation on this path) is described in SocketHandle.
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

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static SocketLease Acquire(SocketHandle handle) => new(handle, handle.EnterCall());

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Dispose() => _handle.ExitCall();
}
