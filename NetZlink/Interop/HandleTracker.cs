// Counts the native objects the binding holds open, by kind. The tests read it around every
// test to fail one that leaves a context, socket, monitor or message open (a leak check in the
// spirit of libgit2sharp's leak mode); it costs one interlocked add per open and close.
using System.Diagnostics;
using System.Text;

namespace NetZlink.Interop;

internal static class HandleTracker
{
    private static readonly int[] LiveCounts = new int[Enum.GetValues<NativeHandleKind>().Length];

    internal static void Opened(NativeHandleKind kind) => Interlocked.Increment(ref LiveCounts[(int)kind]);

    internal static void Closed(NativeHandleKind kind)
    {
        int live = Interlocked.Decrement(ref LiveCounts[(int)kind]);
        Debug.Assert(live >= 0, $"{kind} closed more often than opened");
    }

    internal static int Live(NativeHandleKind kind) => Volatile.Read(ref LiveCounts[(int)kind]);

    /// <summary>All kinds together.</summary>
    internal static int LiveCount
    {
        get
        {
            int total = 0;
            for (int i = 0; i < LiveCounts.Length; i++)
            {
                total += Volatile.Read(ref LiveCounts[i]);
            }

            return total;
        }
    }

    /// <summary>"Context=0 Socket=1 Monitor=0 Message=0", for leak reports.</summary>
    internal static string Describe()
    {
        var text = new StringBuilder();
        foreach (NativeHandleKind kind in Enum.GetValues<NativeHandleKind>())
        {
            if (text.Length > 0)
            {
                text.Append(' ');
            }

            text.Append(kind).Append('=').Append(Live(kind));
        }

        return text.ToString();
    }
}
