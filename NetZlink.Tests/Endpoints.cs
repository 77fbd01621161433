// Fresh endpoints for each test, so tests never collide on a name, a path or a port.
namespace NetZlink.Tests;

internal static class Endpoints
{
    private static readonly string IpcDirectory = CreateIpcDirectory();

    public static string Inproc() => $"inproc://netzlink-{Guid.NewGuid():N}";

    // ipc paths are limited to ~107 bytes; the temp directory plus a short name stays well under.
    public static string Ipc() => $"ipc://{Path.Combine(IpcDirectory, Guid.NewGuid().ToString("N")[..12])}.sock";

    public static string Tcp() => "tcp://127.0.0.1:*";

    /// <summary>Binds <paramref name="socket"/> on a fresh endpoint of <paramref name="transport"/> and returns the endpoint peers connect to.</summary>
    public static string BindFresh(ZlinkSocket socket, string transport)
    {
        string endpoint = transport switch
        {
            "tcp" => Tcp(),
            "ipc" => Ipc(),
            "inproc" => Inproc(),
            _ => throw new ArgumentOutOfRangeException(nameof(transport), transport, "tcp, ipc or inproc"),
        };

        socket.Bind(endpoint);
        return transport == "tcp" ? socket.LastEndpoint : endpoint;
    }

    private static string CreateIpcDirectory()
    {
        string directory = Path.Combine(Path.GetTempPath(), "netzlink-tests");
        Directory.CreateDirectory(directory);
        return directory;
    }
}
