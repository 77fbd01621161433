// How the engine reports a native failure it cannot handle: one non-inlined throw helper.
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using NetZlink.Interop;

namespace NetZlink.Engine;

internal static class EngineErrors
{
    /// <summary>errno of a connect attempt that hit its deadline.</summary>
    internal const int ETIMEDOUT = 110;

    /// <summary>"EACCES (13)" for an errno <see cref="ZlinkError"/> names, else "errno 1234" ("errno 0": unknown).</summary>
    internal static string Name(int errno) =>
        errno != 0 && Enum.IsDefined((ZlinkError)errno) ? $"{(ZlinkError)errno} ({errno})" : $"errno {errno}";

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void Throw(string operation, int errno)
        => Ensure.Throw(errno, operation);
}
