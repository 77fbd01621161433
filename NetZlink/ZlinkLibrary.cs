// Facts about the loaded native library: its version, its capabilities, where it came from.
using NetZlink.Interop;

namespace NetZlink;

/// <summary>The native zlink library this process loaded (the search order is in docs/binding.md, "Loading the native library").</summary>
public static unsafe class ZlinkLibrary
{
    /// <summary>The environment variable that names the library file to load, overriding every other place.</summary>
    public const string PathVariable = NativeLibraryResolver.EnvironmentVariable;

    /// <summary>The native library's version (zlink_version); loads the library if needed.</summary>
    public static Version Version
    {
        get
        {
            int major, minor, patch;
            Native.Version(&major, &minor, &patch);
            return new Version(major, minor, patch);
        }
    }

    /// <summary>Where the library was loaded from; loads it if needed.</summary>
    public static string LoadedFrom
    {
        get
        {
            NativeLibraryResolver.Load();
            return NativeLibraryResolver.LoadedFrom!;
        }
    }

    /// <summary>Whether the library has a capability, e.g. a transport: <c>ipc</c>, <c>tls</c>, <c>ws</c>.</summary>
    /// <param name="capability">The capability's name.</param>
    /// <returns>True when present.</returns>
    /// <exception cref="ArgumentException">The name holds a NUL character or an unpaired surrogate.</exception>
    public static bool Has(string capability)
    {
        ArgumentNullException.ThrowIfNull(capability);
        if (Utf8Z.Problem(capability) is string problem)
        {
            throw new ArgumentException($"Has(\"{Utf8Z.Printable(capability)}\"): the capability name has {problem}.", nameof(capability));
        }

        Span<byte> name = Utf8Z.Encode(capability, stackalloc byte[Utf8Z.StackLimit]);
        fixed (byte* p = name)
        {
            return Native.Has(p) != 0;
        }
    }
}
