// One public Socket call's hold on its native socket: another thread's call meanwhile is refused
// with InvalidOperationException, a concurrent Dispose defers the close until the lease ends, and
// a call after Dispose throws ObjectDisposedException. The protocol (plain stores on the thread
// the socket is biased to, a compare-exchange otherwise) is described in SocketHandle.
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

internal readonly ref struct SocketLease
{
    private readonly SocketHandle _handle;
    private readonly SocketHandle.BiasToken? _bias;

    private SocketLease(SocketHandle handle, string operation)
    {
        _handle = handle;
        Value = handle.EnterCall(operation, out _bias);
    }

    /// <summary>The native socket pointer, valid until <see cref="Dispose"/>.</summary>
    public nint Value { get; }

    /// <summary>Takes the socket for <paramref name="operation"/> (named if the call is refused).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static SocketLease Acquire(SocketHandle handle, string operation) => new(handle, operation);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Dispose() => _handle.ExitCall(_bias);
}
