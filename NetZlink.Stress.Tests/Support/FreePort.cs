// A loopback port nothing listens on right now (the OS picked it, then it was released).

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

    /// <summary>
    /// The first of <paramref name="count"/> consecutive loopback ports nothing listens on now, below
    /// the ephemeral range (so that no connection takes one of them as its local port meanwhile).
    /// </summary>
    public static int Consecutive(int count)
    {
        for (int attempt = 0; attempt < 200; attempt++)
        {
            int first = Random.Shared.Next(20000, 32000 - count);
            var listeners = new List<TcpListener>();
            try
            {
                for (int i = 0; i < count; i++)
                {
                    var listener = new TcpListener(IPAddress.Loopback, first + i);
                    listener.Start();
                    listeners.Add(listener);
                }

                return first;
            }
            catch (SocketException)
            {
            }
            finally
            {
                listeners.ForEach(l => l.Stop());
            }
        }

        throw new InvalidOperationException($"no {count} consecutive free ports found");
    }
}
