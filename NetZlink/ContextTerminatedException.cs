// ETERM: the context was shut down while the call waited or before it started.
namespace NetZlink;

/// <summary>
/// The socket's context was shut down or disposed (ETERM). A thread blocked in a receive, send
/// or poll gets this when another thread disposes the context or calls <see cref="ZlinkContext.Shutdown"/>.
/// </summary>
public sealed class ContextTerminatedException : ZlinkException
{
    /// <summary>Creates the exception for <paramref name="operation"/>.</summary>
    /// <param name="errno">The native error number (ETERM).</param>
    /// <param name="operation">What was attempted.</param>
    /// <param name="description">The library's text for the error.</param>
    public ContextTerminatedException(int errno, string operation, string description)
        : base(errno, operation, description)
    {
    }
}
