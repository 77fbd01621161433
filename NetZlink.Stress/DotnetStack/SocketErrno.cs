// SocketError (Winsock-style names and numbers) → the Linux errno that errors_by_errno
// reports, so that both stacks count a refused connection as 111 and a timed-out one as 110.
using System.Net.Sockets;

namespace NetZlink.Stress.DotnetStack;

/// <summary>The errno for a <see cref="SocketError"/>.</summary>
internal static class SocketErrno
{
    /// <summary>ETIMEDOUT: what a connect attempt that passed --connect-timeout counts as.</summary>
    public const int TimedOut = 110;

    /// <summary>
    /// The Linux errno for <paramref name="error"/>. Codes with no errno (the resolver's HostNotFound,
    /// TryAgain, NoRecovery, NoData) keep their SocketError number (11001-11004), so they stay distinct.
    /// </summary>
    public static int Of(SocketError error) => error switch
    {
        SocketError.Interrupted => 4,               // EINTR
        SocketError.AccessDenied => 13,             // EACCES
        SocketError.Fault => 14,                    // EFAULT
        SocketError.InvalidArgument => 22,          // EINVAL
        SocketError.TooManyOpenSockets => 24,       // EMFILE
        SocketError.WouldBlock => 11,               // EAGAIN
        SocketError.InProgress => 115,              // EINPROGRESS
        SocketError.AlreadyInProgress => 114,       // EALREADY
        SocketError.NotSocket => 88,                // ENOTSOCK
        SocketError.DestinationAddressRequired => 89, // EDESTADDRREQ
        SocketError.MessageSize => 90,              // EMSGSIZE
        SocketError.ProtocolType => 91,             // EPROTOTYPE
        SocketError.ProtocolOption => 92,           // ENOPROTOOPT
        SocketError.ProtocolNotSupported => 93,     // EPROTONOSUPPORT
        SocketError.SocketNotSupported => 94,       // ESOCKTNOSUPPORT
        SocketError.OperationNotSupported => 95,    // EOPNOTSUPP
        SocketError.ProtocolFamilyNotSupported => 96, // EPFNOSUPPORT
        SocketError.AddressFamilyNotSupported => 97, // EAFNOSUPPORT
        SocketError.AddressAlreadyInUse => 98,      // EADDRINUSE
        SocketError.AddressNotAvailable => 99,      // EADDRNOTAVAIL
        SocketError.NetworkDown => 100,             // ENETDOWN
        SocketError.NetworkUnreachable => 101,      // ENETUNREACH
        SocketError.NetworkReset => 102,            // ENETRESET
        SocketError.ConnectionAborted => 103,       // ECONNABORTED
        SocketError.ConnectionReset => 104,         // ECONNRESET
        SocketError.NoBufferSpaceAvailable => 105,  // ENOBUFS
        SocketError.IsConnected => 106,             // EISCONN
        SocketError.NotConnected => 107,            // ENOTCONN
        SocketError.Shutdown => 32,                 // EPIPE: a send on a connection the peer closed
        SocketError.TimedOut => TimedOut,           // ETIMEDOUT
        SocketError.ConnectionRefused => 111,       // ECONNREFUSED
        SocketError.HostDown => 112,                // EHOSTDOWN
        SocketError.HostUnreachable => 113,         // EHOSTUNREACH
        SocketError.OperationAborted => 125,        // ECANCELED
        SocketError.SocketError => 5,               // EIO: an unspecified failure
        _ => (int)error,
    };
}
