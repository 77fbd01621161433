// The benchmark program's own raw P/Invoke declarations: the few zlink C functions the raw
// baselines call (InprocLoop, InteropOverheadBenchmarks, PollerBenchmarks, the "overhead"
// mode), under their C names and with the numbers of native/include/zlink.h. They are declared
// as the binding declares its own (source-generated LibraryImport, blittable, zlink_errno
// without a GC transition), so a raw step costs what the binding's native calls cost and
// managed / raw stays the wrapper's share.
//
// The binding's internals are not visible to this program; it uses NetZlink's public API only.
// So that the raw calls reach the very library file the binding loaded (one copy in the process,
// not a second one found elsewhere), "zlink" resolves for this assembly through a resolver that
// asks the binding where it loaded its library from (the public ZlinkLibrary.LoadedFrom) and
// loads that file, which gives back the same loaded copy; it then checks that the process maps
// one libzlink file and no other.
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

// As in the binding: every signature below is blittable, so the runtime marshals nothing.
[assembly: DisableRuntimeMarshalling]

namespace NetZlink.Benchmarks;

internal static unsafe partial class RawZlink
{
    private const string LibraryName = "zlink";
    private const string LibraryFile = "libzlink.so";
    private const string SystemPathSuffix = " on the system library path";

    // native/include/zlink.h
    internal const int ZLINK_PAIR = 0;
    internal const int ZLINK_LINGER = 17;
    internal const int ZLINK_SNDHWM = 23;
    internal const int ZLINK_RCVHWM = 24;
    internal const int ZLINK_DONTWAIT = 1;
    internal const short ZLINK_POLLIN = 1;

    // Linux errno values.
    internal const int EINTR = 4;
    internal const int EAGAIN = 11;

    private static readonly Lazy<(string File, nint Handle)> Resolved = new(Load);

    /// <summary>The file the raw declarations resolved to (the binding's library); resolves it if needed.</summary>
    internal static string LoadedFrom => Resolved.Value.File;

    [LibraryImport(LibraryName)]
    [SuppressGCTransition]
    internal static partial int zlink_errno();

    [LibraryImport(LibraryName)]
    internal static partial byte* zlink_strerror(int errnum);

    [LibraryImport(LibraryName)]
    internal static partial nint zlink_ctx_new();

    [LibraryImport(LibraryName)]
    internal static partial int zlink_ctx_term(nint ctx);

    [LibraryImport(LibraryName)]
    internal static partial nint zlink_socket(nint ctx, int type);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_close(nint s);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_setsockopt(nint s, int option, void* value, nuint len);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_getsockopt(nint s, int option, void* value, nuint* len);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_bind(nint s, byte* endpointUtf8Nul);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_connect(nint s, byte* endpointUtf8Nul);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_send(nint socket, byte* buf, nuint len, int flags);

    [LibraryImport(LibraryName)]
    internal static partial int zlink_recv(nint socket, byte* buf, nuint len, int flags);

    // C long is 64-bit on Linux x64, hence nint for the timeout.
    [LibraryImport(LibraryName)]
    internal static partial int zlink_poll(RawPollItem* items, int count, nint timeoutMs);

    /// <summary>Throws with zlink's description of the current errno when <paramref name="rc"/> is negative.</summary>
    internal static void Check(int rc, string operation)
    {
        if (rc < 0)
        {
            ThrowFailed(operation, zlink_errno());
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowFailed(string operation, int errno)
        => throw new InvalidOperationException(
            $"{operation} failed with errno {errno} ({Marshal.PtrToStringUTF8((nint)zlink_strerror(errno))}).");

    [ModuleInitializer]
    [SuppressMessage("Usage", "CA2255:The 'ModuleInitializer' attribute should not be used in libraries",
        Justification = "BenchmarkDotNet runs the benchmarks in a generated program that never calls this one's Main: the resolver must be in place before any raw call, whoever makes it.")]
    internal static void Register() =>
        NativeLibrary.SetDllImportResolver(typeof(RawZlink).Assembly, Resolve);

    private static nint Resolve(string libraryName, Assembly assembly, DllImportSearchPath? searchPath) =>
        libraryName == LibraryName ? Resolved.Value.Handle : 0;

    /// <summary>
    /// The binding's library file, loaded once more (the loader hands back the copy already
    /// loaded); throws when the process then maps more than one libzlink file.
    /// </summary>
    private static (string File, nint Handle) Load()
    {
        // Makes the binding load its library first, by its own search order.
        string where = ZlinkLibrary.LoadedFrom;

        // LoadedFrom is the path, with " (from NETZLINK_NATIVE_LIBRARY)" when the variable named
        // it, or "libzlink.so on the system library path" when the loader's search found it.
        string file = where;
        string fromVariable = $" (from {ZlinkLibrary.PathVariable})";
        if (file.EndsWith(fromVariable, StringComparison.Ordinal))
        {
            file = file[..^fromVariable.Length];
        }
        else if (file.EndsWith(SystemPathSuffix, StringComparison.Ordinal))
        {
            file = file[..^SystemPathSuffix.Length];
        }

        nint handle = NativeLibrary.Load(file);
        List<string> mapped = MappedLibzlinkFiles();
        if (mapped.Count > 1)
        {
            throw new InvalidOperationException(
                $"The raw P/Invoke declarations were meant to use the binding's libzlink ({where}), but the process maps {mapped.Count}: {string.Join(", ", mapped)}.");
        }

        return (mapped.Count == 1 ? mapped[0] : file, handle);
    }

    /// <summary>The distinct libzlink files in /proc/self/maps (none listed where there is no such file).</summary>
    private static List<string> MappedLibzlinkFiles()
    {
        var files = new List<string>();
        const string Maps = "/proc/self/maps";
        if (!File.Exists(Maps))
        {
            return files;
        }

        foreach (string line in File.ReadLines(Maps))
        {
            int slash = line.IndexOf('/', StringComparison.Ordinal);
            if (slash < 0)
            {
                continue;
            }

            string path = line[slash..];
            if (Path.GetFileName(path).StartsWith(LibraryFile, StringComparison.Ordinal) && !files.Contains(path))
            {
                files.Add(path);
            }
        }

        return files;
    }
}

/// <summary>zlink_pollitem_t on Linux: { void *socket; int fd; short events; short revents; } (16 bytes).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct RawPollItem
{
    /// <summary>The zlink socket, or 0 to poll <see cref="Fd"/> instead.</summary>
    public nint Socket;
    public int Fd;
    public short Events;
    public short Revents;
}
