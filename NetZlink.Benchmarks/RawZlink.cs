// The raw baselines' calls (InprocLoop, InteropOverheadBenchmarks, PollerBenchmarks, RawPair, the
// "overhead" mode) go straight to the binding's own P/Invoke declarations, NetZlink.Interop's
// NativeMethods (source-generated LibraryImport, blittable, zlink_errno without a GC transition),
// which the binding's InternalsVisibleTo lets this program see: a raw step is the very native
// call the public API makes, without the wrapper around it, through the library file the binding
// loaded (its own resolver, so there is one copy in the process). What is left here: the errors.
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

internal static unsafe class RawZlink
{
    /// <summary>The file the raw calls go to: the binding's library.</summary>
    internal static string LoadedFrom => ZlinkLibrary.LoadedFrom;

    /// <summary>Throws with zlink's description of the current errno when <paramref name="rc"/> is negative.</summary>
    internal static void Check(int rc, string operation)
    {
        if (rc < 0)
        {
            ThrowFailed(operation, NativeMethods.zlink_errno());
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowFailed(string operation, int errno)
        => throw new InvalidOperationException(
            $"{operation} failed with errno {errno} ({Marshal.PtrToStringUTF8((nint)NativeMethods.zlink_strerror(errno))}).");
}
