// The stress tool opens tens of thousands of sockets: it raises its own soft open-file limit to the
// hard one (the library leaves process limits alone unless asked) and fails early, with both
// numbers, when even the hard limit is too low.
namespace NetZlink.Stress.Platform;

internal static unsafe class DescriptorLimit
{
    /// <summary>Current soft and hard RLIMIT_NOFILE of this process.</summary>
    public static (ulong Soft, ulong Hard) Get()
    {
        Libc.RLimit limit;
        if (Libc.getrlimit(Libc.RLIMIT_NOFILE, &limit) != 0)
        {
            throw new InvalidOperationException($"getrlimit(RLIMIT_NOFILE) failed: errno {System.Runtime.InteropServices.Marshal.GetLastSystemError()}");
        }

        return (limit.Current, limit.Maximum);
    }

    /// <summary>Raises the soft open-file limit to the hard one (a server does not know its connection count in advance).</summary>
    public static void RaiseSoftToHard()
    {
        (ulong soft, ulong hard) = Get();
        if (soft < hard)
        {
            Libc.RLimit raised = new() { Current = hard, Maximum = hard };
            _ = Libc.setrlimit(Libc.RLIMIT_NOFILE, &raised);
        }
    }

    /// <summary>Raises the soft limit to the hard one, then throws when <paramref name="connections"/> plus <paramref name="reserved"/> still do not fit.</summary>
    public static void Ensure(int connections, int reserved)
    {
        RaiseSoftToHard();
        int open = Directory.EnumerateFileSystemEntries("/proc/self/fd").Count();
        ulong need = (ulong)connections + (ulong)reserved + (ulong)open;
        (ulong soft, ulong hard) = Get();
        if (need > soft)
        {
            throw new InvalidOperationException(
                $"{connections} connections need {need} open files ({connections} sockets + {reserved} reserved + {open} already open), " +
                $"but this process may open at most {soft} (ulimit -n: soft {soft}, hard {hard}). " +
                "Lower the connection count, raise the hard limit, or split the run over several processes or hosts.");
        }
    }
}
