// Holds a reference on a SafeHandle for the length of one native call, so that a concurrent
// Dispose cannot close the native object under the call: the close is deferred until the lease
// ends. Disposed handles surface as ObjectDisposedException naming the public type.
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal readonly ref struct HandleLease
{
    private readonly SafeHandle _handle;
    private readonly bool _added;

    private HandleLease(SafeHandle handle, bool added)
    {
        _handle = handle;
        _added = added;
        Value = handle.DangerousGetHandle();
    }

    /// <summary>The native pointer, valid until <see cref="Dispose"/>.</summary>
    public nint Value { get; }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static HandleLease Acquire(SafeHandle handle, string ownerName)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException)
        {
            ThrowDisposed(ownerName);
        }

        return new HandleLease(handle, added);
    }

    public void Dispose()
    {
        if (_added)
        {
            _handle.DangerousRelease();
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowDisposed(string ownerName) => throw new ObjectDisposedException(ownerName);
}
