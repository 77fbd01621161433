// EHOSTUNREACH: a ROUTER (with ROUTER_MANDATORY) or STREAM socket was given a routing id that
// names no connected peer.
namespace NetZlink;

/// <summary>The routing id names no connected peer (EHOSTUNREACH).</summary>
public sealed class HostUnreachableException : ZlinkException
{
    /// <summary>Creates the exception for <paramref name="operation"/>.</summary>
    /// <param name="errno">The native error number (EHOSTUNREACH).</param>
    /// <param name="operation">What was attempted.</param>
    /// <param name="description">The library's text for the error.</param>
    public HostUnreachableException(int errno, string operation, string description)
        : base(errno, operation, description)
    {
    }
}
