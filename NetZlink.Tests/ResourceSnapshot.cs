// What a process holds at one moment, for the churn tests: open descriptors (/proc/self/fd), the
// binding's live native handles (HandleTracker: contexts, sockets, monitors, messages, the
// engine's STREAM sockets and monitors included), the managed heap after full collections, and
// the native library's background threads (the libzmq inside NetZlink's library names its I/O and
// reaper threads "ZMQbg/...", a real zlink library "ZLINKbg/...").
//
// Descriptors of loaded assemblies (*.dll) are left out: the runtime keeps every assembly it loads
// open for the life of the process, and tiered JIT or the test framework may load one more in the
// middle of a test; nothing the binding opens is a .dll.
namespace NetZlink.Tests;

internal sealed record ResourceSnapshot(IReadOnlyList<string> Descriptors, int NativeHandles, long ManagedBytes, int LibraryThreads)
{
    /// <summary>Counts everything now; the managed figure after collections that also run finalizers.</summary>
    public static ResourceSnapshot Take()
    {
        // Twice: objects kept alive only by a finalizer are freed by the second collection.
        for (int i = 0; i < 2; i++)
        {
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
            GC.WaitForPendingFinalizers();
        }

        long managed = GC.GetTotalMemory(forceFullCollection: true);
        return new ResourceSnapshot(OpenDescriptors(), HandleTracker.LiveCount, managed, CountLibraryThreads());
    }

    /// <summary>"fd -> target" of every open descriptor but loaded assemblies (the one listing the directory included, in every snapshot alike).</summary>
    public static IReadOnlyList<string> OpenDescriptors()
    {
        var open = new List<string>();
        foreach (string fd in Directory.EnumerateFileSystemEntries("/proc/self/fd"))
        {
            string? target;
            try
            {
                target = new FileInfo(fd).LinkTarget;
            }
            catch (IOException)
            {
                continue; // closed while we listed
            }

            if (target is null || !target.EndsWith(".dll", StringComparison.Ordinal))
            {
                open.Add($"{Path.GetFileName(fd)} -> {target}");
            }
        }

        return open;
    }

    /// <summary>
    /// Threads of this process named "ZMQbg/..." or "ZLINKbg/..." (/proc/self/task/*/comm): the I/O
    /// and reaper threads of every live context, as NetZlink's library (libzmq's names) or a real
    /// zlink library names them.
    /// </summary>
    public static int CountLibraryThreads()
    {
        int count = 0;
        foreach (string task in Directory.EnumerateDirectories("/proc/self/task"))
        {
            try
            {
                string name = File.ReadAllText(Path.Combine(task, "comm"));
                if (name.StartsWith("ZMQbg", StringComparison.Ordinal) || name.StartsWith("ZLINKbg", StringComparison.Ordinal))
                {
                    count++;
                }
            }
            catch (IOException)
            {
                // the thread ended while we listed
            }
        }

        return count;
    }

    /// <summary>"descriptors 41 -> 41, native handles 2 -> 2, library threads 0 -> 0, managed heap 1234567 -> 1240000 bytes (+5433)".</summary>
    public string Against(ResourceSnapshot after) =>
        $"descriptors {Descriptors.Count} -> {after.Descriptors.Count}, native handles {NativeHandles} -> {after.NativeHandles}, " +
        $"library threads {LibraryThreads} -> {after.LibraryThreads}, " +
        $"managed heap {ManagedBytes} -> {after.ManagedBytes} bytes ({after.ManagedBytes - ManagedBytes:+#;-#;0})";

    /// <summary>Descriptors open in <paramref name="after"/> that were not open here (by number and target).</summary>
    public IEnumerable<string> NewIn(ResourceSnapshot after) => after.Descriptors.Except(Descriptors);
}
