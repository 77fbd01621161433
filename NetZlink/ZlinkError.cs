// The error numbers zlink reports, named as in C. The values are Linux's errno values (the
// platform this binding ships for) plus zlink's own codes above ZLINK_HAUSNUMERO.
using System.Diagnostics.CodeAnalysis;

namespace NetZlink;

/// <summary>An error number reported by zlink (<c>zlink_errno()</c>), named as in C.</summary>
[SuppressMessage("Design", "CA1027:Mark enums with FlagsAttribute", Justification = "Error numbers, not bits.")]
[SuppressMessage("Naming", "CA1707:Identifiers should not contain underscores", Justification = "C errno names.")]
public enum ZlinkError
{
    /// <summary>No error.</summary>
    None = 0,
    /// <summary>Operation not permitted.</summary>
    EPERM = 1,
    /// <summary>No such file or directory (for example, unbinding an endpoint that is not bound).</summary>
    ENOENT = 2,
    /// <summary>Interrupted by a signal.</summary>
    EINTR = 4,
    /// <summary>Bad file descriptor.</summary>
    EBADF = 9,
    /// <summary>Resource temporarily unavailable: the call would block.</summary>
    EAGAIN = 11,
    /// <summary>Out of memory.</summary>
    ENOMEM = 12,
    /// <summary>Permission denied.</summary>
    EACCES = 13,
    /// <summary>Bad address (an invalid object was passed).</summary>
    EFAULT = 14,
    /// <summary>No such device.</summary>
    ENODEV = 19,
    /// <summary>Invalid argument (bad endpoint, unknown option, wrong value size…).</summary>
    EINVAL = 22,
    /// <summary>Too many open files.</summary>
    EMFILE = 24,
    /// <summary>Protocol error: a STREAM peer announced an empty body, or broke the TLS or WebSocket protocol (<see cref="ZlinkSocket.StreamEventError"/>).</summary>
    EPROTO = 71,
    /// <summary>Not a socket.</summary>
    ENOTSOCK = 88,
    /// <summary>Message too long.</summary>
    EMSGSIZE = 90,
    /// <summary>Transport protocol not supported.</summary>
    EPROTONOSUPPORT = 93,
    /// <summary>Operation not supported (also EOPNOTSUPP on Linux).</summary>
    ENOTSUP = 95,
    /// <summary>Address family not supported.</summary>
    EAFNOSUPPORT = 97,
    /// <summary>Address already in use.</summary>
    EADDRINUSE = 98,
    /// <summary>Cannot assign the requested address.</summary>
    EADDRNOTAVAIL = 99,
    /// <summary>Network is down.</summary>
    ENETDOWN = 100,
    /// <summary>Network is unreachable.</summary>
    ENETUNREACH = 101,
    /// <summary>Connection reset by the network.</summary>
    ENETRESET = 102,
    /// <summary>Connection aborted.</summary>
    ECONNABORTED = 103,
    /// <summary>Connection reset by peer.</summary>
    ECONNRESET = 104,
    /// <summary>No buffer space available.</summary>
    ENOBUFS = 105,
    /// <summary>Not connected.</summary>
    ENOTCONN = 107,
    /// <summary>Timed out.</summary>
    ETIMEDOUT = 110,
    /// <summary>Connection refused.</summary>
    ECONNREFUSED = 111,
    /// <summary>No route to the peer: the routing id names no connected peer.</summary>
    EHOSTUNREACH = 113,
    /// <summary>Operation in progress.</summary>
    EINPROGRESS = 115,
    /// <summary>The operation is not valid in the socket's current state.</summary>
    EFSM = 156384712 + 51,
    /// <summary>The peer speaks an incompatible protocol.</summary>
    ENOCOMPATPROTO = 156384712 + 52,
    /// <summary>The context was shut down or terminated.</summary>
    ETERM = 156384712 + 53,
    /// <summary>No I/O thread is available.</summary>
    EMTHREAD = 156384712 + 54,
}
