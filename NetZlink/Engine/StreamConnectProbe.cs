// The engine's start check of the native library: can its STREAM sockets connect at all? A build
// whose STREAM sockets are server-only (zlink 1.3) refuses zlink_connect on one at once with
// EOPNOTSUPP; NetZlink's own library starts an asynchronous connect and returns 0. Without this
// check such a library turns every connection of the run into the same failure, one at a time.
//
// The probe connects a fresh STREAM socket to a loopback port that a plain socket of this process
// holds bound but not listening: the kernel refuses the connect, and no other process is reached.
// The socket is closed right away with LINGER 0. A library passes the check once per process (it
// cannot change once loaded), so later engines skip it.
using System.Net;
using System.Text;
using NetZlink.Interop;

namespace NetZlink.Engine;

internal static unsafe class StreamConnectProbe
{
    private static int s_passed;

    /// <summary>Throws when the loaded library's STREAM sockets cannot connect; any other outcome passes.</summary>
    /// <param name="context">The native context to make the probe socket in.</param>
    /// <exception cref="ZlinkNotSupportedException">zlink_connect on a STREAM socket failed with ENOTSUP/EOPNOTSUPP; the message names the library file.</exception>
    /// <exception cref="ZlinkException">It failed with EPROTONOSUPPORT (no tcp:// for STREAM), or the probe socket could not be made.</exception>
    internal static void Check(nint context)
    {
        if (Volatile.Read(ref s_passed) != 0)
        {
            return;
        }

        nint socket = Native.Socket(context, ZlinkConstants.ZLINK_STREAM);
        if (socket == 0)
        {
            EngineErrors.Throw("zlink_socket(STREAM) for ClientEngine.Start's check of the native library", Native.Errno());
        }

        HandleTracker.Opened(NativeHandleKind.Socket);
        int errno;
        try
        {
            int linger = 0;
            _ = Native.SetOption(socket, ZlinkConstants.ZLINK_LINGER, &linger, sizeof(int));
            errno = Connect(socket);
        }
        catch (System.Net.Sockets.SocketException)
        {
            // No IPv4 loopback to probe with: nothing is known against the library, so the
            // engine goes on (without remembering a pass).
            return;
        }
        finally
        {
            ClientEngine.CloseShardSocket(socket);
        }

        if (errno is ZlinkConstants.EOPNOTSUPP or ZlinkConstants.EPROTONOSUPPORT)
        {
            throw CannotConnect(errno);
        }

        // Anything else (0, or a resource error such as EMFILE) says nothing against the library:
        // the engine's own attempts report it per connection.
        Volatile.Write(ref s_passed, errno == 0 ? 1 : 0);
    }

    /// <summary>The exception for a library whose STREAM sockets refused to connect with <paramref name="errno"/>.</summary>
    internal static ZlinkException CannotConnect(int errno)
    {
        const string operation = "zlink_connect on a STREAM socket (ClientEngine.Start)";
        string from = ZlinkLibrary.LoadedFrom;
        string message =
            $"The native library {from} cannot connect STREAM sockets: {operation} failed with " +
            $"{(errno == ZlinkConstants.EOPNOTSUPP ? "EOPNOTSUPP/ENOTSUP" : ZlinkException.NameOf(errno))} ({errno}): " +
            $"{Ensure.Describe(errno)}. The engine opens every connection " +
            "that way; a build whose STREAM sockets are server-only (zlink 1.3) cannot run it. Load NetZlink's own " +
            (from.EndsWith($"(from {ZlinkLibrary.PathVariable})", StringComparison.Ordinal)
                ? $"libzlink.so: unset {ZlinkLibrary.PathVariable}, or point it at one."
                : $"libzlink.so: set {ZlinkLibrary.PathVariable} to its path.");
        return errno == ZlinkConstants.EOPNOTSUPP
            ? new ZlinkNotSupportedException(errno, operation, message, innerException: null)
            : new ZlinkException(errno, operation, message, innerException: null);
    }

    /// <summary>zlink_connect to a loopback port nobody listens on; returns 0 or the errno.</summary>
    /// <exception cref="System.Net.Sockets.SocketException">No loopback port could be bound for it.</exception>
    private static int Connect(nint socket)
    {
        using var holder = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork,
            System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)holder.LocalEndPoint!).Port;
        byte[] endpoint = Encoding.ASCII.GetBytes($"tcp://127.0.0.1:{port}\0");
        fixed (byte* e = endpoint)
        {
            return Native.Connect(socket, e) == 0 ? 0 : Native.Errno();
        }
    }
}
