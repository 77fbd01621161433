// Checks, before connecting, that the process may open the descriptors a run needs.
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>The process's open-file limit against what a number of connections needs.</summary>
internal static class DescriptorBudget
{
    /// <summary>Current soft and hard RLIMIT_NOFILE of this process.</summary>
    public static (ulong Soft, ulong Hard) GetLimits()
    {
        if (!Native.DescriptorLimitGet(out ulong soft, out ulong hard))
        {
            throw new InvalidOperationException($"getrlimit(RLIMIT_NOFILE) failed: errno {System.Runtime.InteropServices.Marshal.GetLastSystemError()}");
        }

        return (soft, hard);
    }

    /// <summary>Descriptors currently open in this process (entries of /proc/self/fd), or -1 when unknown.</summary>
    public static int CountOpenDescriptors()
    {
        try
        {
            return Directory.GetFiles("/proc/self/fd").Length;
        }
        catch (IOException)
        {
            return -1;
        }
        catch (UnauthorizedAccessException)
        {
            return -1;
        }
    }

    /// <summary>
    /// Makes sure <paramref name="connections"/> more descriptors plus <paramref name="reserved"/> fit:
    /// when they do not, raises the soft limit up to the hard one if <paramref name="mayRaise"/> and
    /// that is enough, and otherwise throws an <see cref="InvalidOperationException"/> naming the
    /// need, the limits and the way out.
    /// </summary>
    public static void Ensure(int connections, int reserved, bool mayRaise)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(connections);
        ArgumentOutOfRangeException.ThrowIfNegative(reserved);
        int open = Math.Max(0, CountOpenDescriptors());
        ulong need = (ulong)connections + (ulong)reserved + (ulong)open;
        (ulong soft, ulong hard) = GetLimits();
        if (need <= soft)
        {
            return;
        }

        if (need > hard)
        {
            throw new InvalidOperationException(
                $"{connections} connections need {need} open files ({connections} sockets + {reserved} reserved + {open} already open), " +
                $"but this process may open at most {hard} (ulimit -n: soft {soft}, hard {hard}). " +
                "Lower the connection count, raise the hard limit, or split the run over several processes or hosts.");
        }

        if (!mayRaise)
        {
            throw new InvalidOperationException(
                $"{connections} connections need {need} open files ({connections} sockets + {reserved} reserved + {open} already open), " +
                $"above this process's soft limit {soft} (hard {hard}). Raise it before starting (ulimit -n {need}), or set " +
                "EngineOptions.RaiseDescriptorLimit = true to let the engine raise the soft limit to the hard one.");
        }

        if (!Native.DescriptorLimitSet(hard, hard))
        {
            throw new InvalidOperationException(
                $"{connections} connections need {need} open files, above the soft limit {soft}; raising it to the hard limit {hard} failed " +
                $"(errno {System.Runtime.InteropServices.Marshal.GetLastSystemError()}).");
        }
    }

    /// <summary>Raises the soft open-file limit to the hard one (a server does not know its connection count in advance).</summary>
    public static void RaiseSoftLimitToHard()
    {
        (ulong soft, ulong hard) = GetLimits();
        if (soft < hard)
        {
            _ = Native.DescriptorLimitSet(hard, hard);
        }
    }
}
