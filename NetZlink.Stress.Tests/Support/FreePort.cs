// A loopback port nothing listens on right now (the OS picked it, then it was released).
using System.Net;
using System.Net.Sockets;

namespace NetZlink.Stress.Tests.Support;

internal static class FreePort
{
    public static int Next()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }
}
