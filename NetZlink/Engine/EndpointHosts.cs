// The engine's up-front name check: every host name in a tcp://, tls://, ws:// or wss:// endpoint is resolved once, before
// anything is opened, so a name that does not resolve is one exception that says so, instead of
// every connection failing with the native library's EINVAL.
using System.Net;
using System.Net.Sockets;

namespace NetZlink.Engine;

internal static class EndpointHosts
{
    /// <summary>
    /// Resolves the host name of each <c>tcp://host:port</c> (or tls://, ws://host:port/path, wss://) endpoint (once per name) to an IPv4
    /// address, as the engine's STREAM sockets connect over IPv4 unless an endpoint gives an IPv6
    /// address literally. Address literals, other transports and malformed endpoints are left to
    /// the native library, which refuses the last two with a permanent errno.
    /// </summary>
    /// <exception cref="ArgumentException">A host name does not resolve; the message names the host, the endpoint and the resolver's reason.</exception>
    internal static void EnsureResolvable(IEnumerable<string> endpoints)
    {
        var checkedNames = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (string endpoint in endpoints)
        {
            if (HostName(endpoint) is { } host && checkedNames.Add(host))
            {
                Resolve(host, endpoint);
            }
        }
    }

    /// <summary>The host of a <c>tcp://host:port</c> (tls://, ws://host:port/path, wss://) endpoint when it is a name, not an address; else null.</summary>
    internal static string? HostName(string endpoint)
    {
        if (Interop.EndpointTransports.Scheme(endpoint) is not ("tcp" or "tls" or "ws" or "wss"))
        {
            return null;
        }

        string address = endpoint[(endpoint.IndexOf("://", StringComparison.Ordinal) + 3)..];
        int slash = address.IndexOf('/');
        if (slash >= 0)
        {
            // ws:// and wss:// carry a path after host:port.
            address = address[..slash];
        }

        int colon = address.LastIndexOf(':');
        if (colon <= 0)
        {
            return null;
        }

        string host = address[..colon];
        bool literal = host.StartsWith('[') || host == "*" || IPAddress.TryParse(host, out _);
        return literal ? null : host;
    }

    private static void Resolve(string host, string endpoint)
    {
        string reason;
        SocketException? cause = null;
        try
        {
            if (Dns.GetHostAddresses(host, AddressFamily.InterNetwork).Length > 0)
            {
                return;
            }

            reason = "it has no IPv4 address (the engine connects over IPv4 unless the endpoint gives an IPv6 address literally)";
        }
        catch (SocketException e)
        {
            reason = e.Message;
            cause = e;
        }

        throw new ArgumentException($"could not resolve host '{host}' in endpoint {endpoint}: {reason}", cause);
    }
}
