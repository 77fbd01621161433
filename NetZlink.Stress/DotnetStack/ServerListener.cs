// The listening socket of the plain .NET servers (the dotnet echo server and the --fault server),
// set up once the same way: --bind-host/--port, --backlog, and --sndbuf/--rcvbuf on the listener,
// which accepted sockets inherit.
using System.Net;
using System.Net.Sockets;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

/// <summary>Opens a bound, listening TCP socket for a server.</summary>
internal static class ServerListener
{
    /// <summary>Binds BindHost:Port (Port 0: any free port) and listens; a SocketException names the failure (e.g. the port is in use).</summary>
    public static Socket Open(ScenarioSettings settings)
    {
        IPEndPoint endpoint = EndpointResolver.ForServer(settings.BindHost, settings.Port);
        var listener = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (endpoint.AddressFamily == AddressFamily.InterNetworkV6)
            {
                listener.DualMode = endpoint.Address.Equals(IPAddress.IPv6Any);
            }

            listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            if (settings.SendBuffer > 0)
            {
                listener.SendBufferSize = settings.SendBuffer;
            }

            if (settings.ReceiveBuffer > 0)
            {
                listener.ReceiveBufferSize = settings.ReceiveBuffer;
            }

            listener.Bind(endpoint);
            listener.Listen(settings.Backlog);
            return listener;
        }
        catch
        {
            listener.Dispose();
            throw;
        }
    }
}
