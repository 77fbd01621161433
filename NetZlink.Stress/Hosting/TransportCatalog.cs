// The transports the tool knows by name, and which of them the loaded native library can run.
namespace NetZlink.Stress.Hosting;

/// <summary>Transport names for --transport and s4, and their availability.</summary>
internal static class TransportCatalog
{
    /// <summary>Every transport the s4 scenario names (docs/scenarios.md).</summary>
    public static readonly IReadOnlyList<string> Known = ["tcp", "tls", "ws", "wss"];

    /// <summary>
    /// Whether the netzlink stack can run <paramref name="transport"/> here: tcp always; tls and ws when
    /// the native library reports them (zlink_has), wss when it reports both. A library without
    /// zlink_has counts as tcp-only.
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
            string name = transport.ToLowerInvariant();
            return name == "wss" ? ZlinkLibrary.Has("ws") && ZlinkLibrary.Has("tls") : ZlinkLibrary.Has(name);
        }
        catch (EntryPointNotFoundException)
        {
            return false;
        }
    }

    /// <summary>The SKIP reason for a transport that <see cref="IsAvailable"/> rejects.</summary>
    public static string UnavailableReason(string transport) =>
        $"transport {transport} is not available in this native library";

    /// <summary>
    /// Whether the dotnet stack's <paramref name="end"/> runs <paramref name="transport"/>: every known one on both ends
    /// (tcp: sockets; tls: SslStream; ws: System.Net.WebSockets; wss: System.Net.WebSockets over SslStream).
    /// </summary>
#pragma warning disable IDE0060 // both ends run the same transports; the parameter stays for the call sites and the reason
    public static bool DotnetSupports(string transport, DotnetEnd end) =>
#pragma warning restore IDE0060
        Known.Contains(transport, StringComparer.OrdinalIgnoreCase);

    /// <summary>The SKIP reason for a transport the dotnet stack's <paramref name="end"/> does not implement.</summary>
    public static string DotnetUnavailableReason(string transport, DotnetEnd end) =>
        $"transport {transport} is not implemented by the dotnet stack (its {(end == DotnetEnd.Server ? "server" : "client")} runs {string.Join(", ", Known)})";

    /// <summary>Why the server of <paramref name="stack"/> cannot serve <paramref name="transport"/> here, or null when it can.</summary>
    public static string? ServerUnavailableReason(string transport, string stack) => stack == Scenarios.StackNames.Dotnet
        ? (DotnetSupports(transport, DotnetEnd.Server) ? null : DotnetUnavailableReason(transport, DotnetEnd.Server))
        : (IsAvailable(transport) ? null : UnavailableReason(transport));
}

/// <summary>Which end of a run the dotnet stack plays.</summary>
internal enum DotnetEnd
{
    /// <summary>The load client.</summary>
    Client,

    /// <summary>The echo server.</summary>
    Server,
}
