// Which connect errors the engine retries. An attempt that failed with an error that would come
// back the same on every try (the endpoint, the library or the kernel says "never") resolves the
// connection at once; anything else is retried as EngineOptions.ConnectRetries says.
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>
/// The engine's retry policy for failed connect attempts, by errno (Linux numbering).
/// <para>Permanent, never retried (the same call gives the same answer):</para>
/// <list type="bullet">
/// <item><description>EINVAL (22): the endpoint is malformed, or its host does not resolve (the
/// native library resolves a host name once, when the endpoint is first connected, and reports a
/// failure as EINVAL as libzmq does; <see cref="ClientEngine"/> resolves every host up front).</description></item>
/// <item><description>ENODEV (19): the endpoint names a network interface that does not exist.</description></item>
/// <item><description>EPROTONOSUPPORT (93): the library does not connect STREAM sockets over the endpoint's transport.</description></item>
/// <item><description>ENOTSUP / EOPNOTSUPP (95): the library cannot connect this kind of socket at all
/// (a build whose STREAM sockets are server-only, such as zlink 1.3).</description></item>
/// <item><description>EAFNOSUPPORT (97): the kernel has no support for the address's family (IPv6 switched off).</description></item>
/// <item><description>EPROTO (71): the peer does not speak the endpoint's protocol (a tls:// peer that
/// is not TLS) or refused it (a ws:// or wss:// upgrade answered with anything but 101, such as 404
/// for another path).</description></item>
/// </list>
/// <para>Transient, retried: ECONNREFUSED (111, nothing listens yet, or its backlog is full),
/// ETIMEDOUT (110, also the engine's own deadline), EHOSTUNREACH (113), ENETUNREACH (101) and
/// ENETDOWN (100, routes and links come back), ECONNRESET (104) and ECONNABORTED (103, one
/// connection's fate), EADDRNOTAVAIL (99) and EAGAIN (11: no free ephemeral port, freed as
/// connections in TIME_WAIT expire), EMFILE (24), ENFILE (23), ENOBUFS (105) and ENOMEM (12:
/// resources that closing connections give back), EACCES (13: also a TLS certificate refused, which a
/// renewed certificate changes) and EPERM (1: a local firewall rule, which can change), an unknown errno (0) and any errno not listed as permanent.</para>
/// </summary>
internal static class ConnectErrnoPolicy
{
    /// <summary>True when a connect attempt that failed with <paramref name="errno"/> would fail the same way again.</summary>
    internal static bool IsPermanent(int errno) => errno is ZlinkConstants.EINVAL or ZlinkConstants.ENODEV
        or ZlinkConstants.EPROTONOSUPPORT or ZlinkConstants.EOPNOTSUPP or ZlinkConstants.EAFNOSUPPORT
        or ZlinkConstants.EPROTO;
}
