// ENOTSUP / EOPNOTSUPP: the loaded native library or this socket type does not do that (for
// example peer introspection on a PAIR socket, or connecting a STREAM socket on zlink 1.3).
namespace NetZlink;

/// <summary>The native library, or this kind of socket, does not support the operation (ENOTSUP / EOPNOTSUPP).</summary>
public sealed class ZlinkNotSupportedException : ZlinkException
{
    /// <summary>Creates the exception for <paramref name="operation"/>.</summary>
    /// <param name="errno">The native error number (ENOTSUP).</param>
    /// <param name="operation">What was attempted.</param>
    /// <param name="description">The library's text for the error, with a hint when the binding has one.</param>
    public ZlinkNotSupportedException(int errno, string operation, string description)
        : base(errno, operation, description)
    {
    }

    /// <summary>Creates the exception with a whole message of the binding's (e.g. the engine's start check).</summary>
    internal ZlinkNotSupportedException(int errno, string operation, string message, Exception? innerException)
        : base(errno, operation, message, innerException)
    {
    }
}
