// Turns --host/--bind-host into the IPEndPoint the dotnet stack connects to or binds, the way the
// netzlink stack reads tcp://host:port: an address literal (IPv6 with or without brackets), "*"
// for every IPv4 address, or a name resolved once before the run.
using System.Net;
using System.Net.Sockets;

namespace NetZlink.Stress.DotnetStack;

/// <summary>Host text → <see cref="IPEndPoint"/>.</summary>
internal static class EndpointResolver
{
    /// <summary>The server address a client connects to.</summary>
    /// <exception cref="ArgumentException">The host is neither an address nor a name that resolves.</exception>
    public static IPEndPoint ForClient(string host, int port) => new(Resolve(host, "--host"), port);

    /// <summary>The local address a server binds ("*" and "" mean every IPv4 address).</summary>
    /// <exception cref="ArgumentException">The host is neither an address nor a name that resolves.</exception>
    public static IPEndPoint ForServer(string bindHost, int port) =>
        bindHost is "*" or "" ? new IPEndPoint(IPAddress.Any, port) : new IPEndPoint(Resolve(bindHost, "--bind-host"), port);

    private static IPAddress Resolve(string host, string flag)
    {
        string bare = host.StartsWith('[') && host.EndsWith(']') ? host[1..^1] : host;
        if (IPAddress.TryParse(bare, out IPAddress? address))
        {
            return address;
        }

        try
        {
            IPAddress[] found = Dns.GetHostAddresses(bare);
            return found.FirstOrDefault(a => a.AddressFamily == AddressFamily.InterNetwork) ?? found.FirstOrDefault()
                ?? throw new ArgumentException($"{flag} {host}: the name resolves to no address");
        }
        catch (SocketException e)
        {
            throw new ArgumentException($"{flag} {host}: not an address, and resolving it failed: {e.Message}", e);
        }
    }
}
