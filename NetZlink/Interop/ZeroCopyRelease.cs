// What a zero-copy message must undo when zlink is done with its data: unpin the managed array
// (if any) and call the user's callback, exactly once. zlink reaches it through one static
// [UnmanagedCallersOnly] function; the GCHandle to this object travels as the free function's
// hint, so nothing here can be collected while the library still holds the data.
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed unsafe class ZeroCopyRelease
{
    private readonly MessageFreeCallback? _native;
    private readonly object? _state;
    private readonly byte[]? _array;
    private readonly Action<byte[]>? _released;
    private GCHandle _pin;
    private int _freed;

    private ZeroCopyRelease(MessageFreeCallback? native, object? state, byte[]? array, Action<byte[]>? released)
    {
        _native = native;
        _state = state;
        _array = array;
        _released = released;
    }

    /// <summary>The zlink_free_fn every zero-copy message is created with.</summary>
    internal static delegate* unmanaged[Cdecl]<void*, void*, void> FreeFunction => &OnFree;

    internal static ZeroCopyRelease ForNative(MessageFreeCallback free, object? state) => new(free, state, null, null);

    /// <summary>Pins <paramref name="array"/> until the release runs; returns the pinned address of element 0.</summary>
    internal static ZeroCopyRelease ForArray(byte[] array, Action<byte[]>? released, out byte* pinned)
    {
        var release = new ZeroCopyRelease(null, null, array, released);
        release._pin = GCHandle.Alloc(array, GCHandleType.Pinned);
        pinned = (byte*)release._pin.AddrOfPinnedObject();
        return release;
    }

    /// <summary>The hint for zlink_msg_init_data: a handle that keeps this object alive until OnFree.</summary>
    internal nint ToHint() => GCHandle.ToIntPtr(GCHandle.Alloc(this));

    /// <summary>Undoes <see cref="ToHint"/> and the pin without calling back, when init_data failed.</summary>
    internal static void Abandon(nint hint)
    {
        var handle = GCHandle.FromIntPtr(hint);
        ((ZeroCopyRelease)handle.Target!).Unpin();
        handle.Free();
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static void OnFree(void* data, void* hint)
    {
        var handle = GCHandle.FromIntPtr((nint)hint);
        var release = (ZeroCopyRelease)handle.Target!;
        handle.Free();
        Debug.Assert(Interlocked.Exchange(ref release._freed, 1) == 0, "zlink called a free function twice");
        release.Unpin();
        try
        {
            if (release._native is not null)
            {
                release._native((nint)data, release._state);
            }
            else
            {
                release._released?.Invoke(release._array!);
            }
        }
#pragma warning disable CA1031 // An exception must not unwind into native code (possibly an I/O thread): it would end the process.
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }

    private void Unpin()
    {
        if (_pin.IsAllocated)
        {
            _pin.Free();
        }
    }
}
