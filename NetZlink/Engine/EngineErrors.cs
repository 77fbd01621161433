// How the engine reports a native failure it cannot handle: one non-inlined throw helper.
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using NetZlink.Interop;

namespace NetZlink.Engine;

internal static class EngineErrors
{
    /// <summary>errno of a connect attempt that hit its deadline.</summary>
    internal const int ETIMEDOUT = 110;

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void Throw(string operation, int errno)
        => Ensure.Throw(errno, operation);
}
