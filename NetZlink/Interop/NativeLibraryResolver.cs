// The one place that decides which libzlink is loaded. Every [LibraryImport("zlink")] in this
// assembly (the binding's and the engine's) resolves through it; it is registered once, by a
// module initializer, before any code of the assembly runs.
//
// Search order (the first file that loads and exports zlink_ctx_new wins):
//   1. $NETZLINK_NATIVE_LIBRARY, the path of a library file. When it is set, it is the only
//      candidate: a library the user named explicitly that fails to load is an error, never a
//      silent fallback to another build.
//   2. runtimes/<rid>/native/libzlink.so next to this assembly (how NetZlink.csproj and the
//      NuGet package lay it out), for the runtime's RID and the portable linux-<arch> RID, then
//      libzlink.so directly next to the assembly (a RID-specific publish flattens runtimes/).
//   3. The system search path: libzlink.so ("zlink") via LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib.
// When nothing loads, the DllNotFoundException lists every place tried and why each failed.
// Nothing else is searched: a libzlink.so lying in some directory above an application is never
// picked up. Code run from the repository's checkout finds the native build because every
// project's output gets a copy under runtimes/ (NetZlink.csproj).
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace NetZlink.Interop;

internal static class NativeLibraryResolver
{
    internal const string EnvironmentVariable = "NETZLINK_NATIVE_LIBRARY";
    private const string FileName = "libzlink.so";
    private const string ProbeExport = "zlink_ctx_new";

    private static readonly Lock Gate = new();
    private static nint s_library;
    private static string? s_loadedFrom;

    /// <summary>Where the loaded library came from, or null before the first native call.</summary>
    internal static string? LoadedFrom => Volatile.Read(ref s_loadedFrom);

    [ModuleInitializer]
    [SuppressMessage("Usage", "CA2255:The 'ModuleInitializer' attribute should not be used in libraries",
        Justification = "The resolver must be in place before the first P/Invoke of this assembly, whichever type makes it.")]
    internal static void Register() =>
        NativeLibrary.SetDllImportResolver(typeof(NativeLibraryResolver).Assembly, Resolve);

    private static nint Resolve(string libraryName, Assembly assembly, DllImportSearchPath? searchPath) =>
        libraryName == NativeMethods.LibraryName ? Load() : 0;

    /// <summary>Loads the library once, following the search order above.</summary>
    internal static nint Load()
    {
        nint loaded = Volatile.Read(ref s_library);
        if (loaded != 0)
        {
            return loaded;
        }

        lock (Gate)
        {
            if (s_library != 0)
            {
                return s_library;
            }

            var attempts = new List<string>();
            nint library = Probe(Environment.GetEnvironmentVariable(EnvironmentVariable), AssemblyDirectory(), attempts, out string? where);
            if (library == 0)
            {
                throw new DllNotFoundException(Describe(attempts));
            }

            Volatile.Write(ref s_loadedFrom, where);
            Volatile.Write(ref s_library, library);
            return library;
        }
    }

    /// <summary>
    /// Walks the search order for the given environment value and assembly directory, recording
    /// each failed place in <paramref name="attempts"/>; returns the loaded library or 0.
    /// </summary>
    internal static nint Probe(string? environmentValue, string assemblyDirectory, List<string> attempts, out string? loadedFrom)
    {
        foreach ((string where, Func<nint> load) in Candidates(environmentValue, assemblyDirectory, attempts))
        {
            nint library = TryLoad(where, load, attempts);
            if (library != 0)
            {
                loadedFrom = where;
                return library;
            }
        }

        loadedFrom = null;
        return 0;
    }

    private static IEnumerable<(string Where, Func<nint> Load)> Candidates(string? environmentValue, string assemblyDirectory, List<string> attempts)
    {
        if (!string.IsNullOrEmpty(environmentValue))
        {
            string path = Path.GetFullPath(environmentValue);
            yield return ($"{path} (from {EnvironmentVariable})", () => LoadFile(path));
            yield break;
        }

        attempts.Add($"{EnvironmentVariable}: not set");

        foreach (string rid in RuntimeIdentifiers())
        {
            string path = Path.Combine(assemblyDirectory, "runtimes", rid, "native", FileName);
            yield return (path, () => LoadFile(path));
        }

        string flat = Path.Combine(assemblyDirectory, FileName);
        yield return (flat, () => LoadFile(flat));

        // A bare file name makes dlopen search the system path: LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib.
        yield return ($"{FileName} on the system library path", () => NativeLibrary.Load(FileName));
    }

    private static nint LoadFile(string path)
    {
        if (!File.Exists(path))
        {
            throw new FileNotFoundException("file not found");
        }

        return NativeLibrary.Load(path);
    }

    private static nint TryLoad(string where, Func<nint> load, List<string> attempts)
    {
        nint library;
        try
        {
            library = load();
        }
        catch (Exception e) when (e is DllNotFoundException or BadImageFormatException or FileNotFoundException or IOException)
        {
            attempts.Add($"{where}: {Reason(e)}");
            return 0;
        }

        if (!NativeLibrary.TryGetExport(library, ProbeExport, out _))
        {
            attempts.Add($"{where}: loaded, but it does not export {ProbeExport}, so it is not a zlink library");
            NativeLibrary.Free(library);
            return 0;
        }

        return library;
    }

    /// <summary>
    /// The loader's own words: the runtime's message is one generic sentence followed by the
    /// dlerror() lines that actually say why, so keep those when there are any.
    /// </summary>
    private static string Reason(Exception e)
    {
        string[] lines = e.Message.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        return lines.Length > 1 ? string.Join("; ", lines[1..]) : e.Message;
    }

    [UnconditionalSuppressMessage("SingleFile", "IL3000:Avoid accessing Assembly file path when publishing as a single file",
        Justification = "An empty Location (single-file) falls back to AppContext.BaseDirectory.")]
    private static string AssemblyDirectory()
    {
        // Location is empty in a single-file app; the app's base directory is where the files are then.
        string location = typeof(NativeLibraryResolver).Assembly.Location;
        string? directory = string.IsNullOrEmpty(location) ? null : Path.GetDirectoryName(location);
        return string.IsNullOrEmpty(directory) ? AppContext.BaseDirectory : directory;
    }

    private static IEnumerable<string> RuntimeIdentifiers()
    {
        string current = RuntimeInformation.RuntimeIdentifier;
        yield return current;

        string portable = "linux-" + RuntimeInformation.ProcessArchitecture.ToString().ToLowerInvariant();
        if (portable != current)
        {
            yield return portable;
        }
    }

    internal static string Describe(List<string> attempts)
    {
        var text = new StringBuilder("NetZlink could not load the native zlink library. Places tried, in order:");
        foreach (string attempt in attempts)
        {
            text.AppendLine().Append("  - ").Append(attempt);
        }

        text.AppendLine()
            .Append("Build native/ (bash scripts/setup.sh), reference the NetZlink package, or set ")
            .Append(EnvironmentVariable).Append(" to the path of a libzlink.so.");
        return text.ToString();
    }
}
