// The transports the tool knows by name, and which of them the loaded native library can run.
namespace NetZlink.Stress.Hosting;

/// <summary>Transport names for --transport and s4, and their availability.</summary>
internal static class TransportCatalog
{
    /// <summary>Every transport the s4 scenario names (docs/scenarios.md).</summary>
    public static readonly IReadOnlyList<string> Known = ["tcp", "tls", "ws", "wss"];

    /// <summary>
    /// Whether runs over <paramref name="transport"/> can happen here: tcp always; tls, ws and wss when
    /// the native library reports them (zlink_has; real zlink builds only, never the project's own).
    /// A library without zlink_has counts as tcp-only.
    /// </summary>
    /// <exception cref="DllNotFoundException">The native library cannot be loaded at all.</exception>
    public static bool IsAvailable(string transport)
    {
        if (string.Equals(transport, "tcp", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        try
        {
            return ZlinkLibrary.Has(transport.ToLowerInvariant());
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
    }

    /// <summary>The SKIP reason for a transport that <see cref="IsAvailable"/> rejects.</summary>
    public static string UnavailableReason(string transport) =>
        $"transport {transport} is not available in this native library";

    /// <summary>Whether the dotnet stack (plain TCP sockets) runs <paramref name="transport"/>: tcp only.</summary>
    public static bool DotnetSupports(string transport) => string.Equals(transport, "tcp", StringComparison.OrdinalIgnoreCase);

    /// <summary>The SKIP reason for a transport the dotnet stack does not implement.</summary>
    public static string DotnetUnavailableReason(string transport) => string.Equals(transport, "tls", StringComparison.OrdinalIgnoreCase)
        ? "transport tls: the dotnet stack has no tls yet (tcp only)"
        : $"transport {transport} is not implemented by the dotnet stack (tcp only)";

    /// <summary>Why <paramref name="stack"/> cannot run <paramref name="transport"/> here, or null when it can.</summary>
    public static string? UnavailableReason(string transport, string stack) => stack == Scenarios.StackNames.Dotnet
        ? (DotnetSupports(transport) ? null : DotnetUnavailableReason(transport))
        : (IsAvailable(transport) ? null : UnavailableReason(transport));
}
