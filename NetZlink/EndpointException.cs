// Bind, Connect, Unbind or Disconnect failed for a reason tied to the endpoint.
namespace NetZlink;

/// <summary>Binding, connecting, unbinding or disconnecting an endpoint failed.</summary>
public sealed class EndpointException : ZlinkException
{
    /// <summary>Creates the exception for <paramref name="operation"/> on <paramref name="endpoint"/>.</summary>
    /// <param name="errno">The native error number.</param>
    /// <param name="operation">What was attempted, with the endpoint.</param>
    /// <param name="description">The library's text for the error.</param>
    /// <param name="endpoint">The endpoint.</param>
    public EndpointException(int errno, string operation, string description, string endpoint)
        : base(errno, operation, description)
    {
        Endpoint = endpoint;
    }

    /// <summary>The endpoint the operation was given, e.g. <c>tcp://127.0.0.1:5555</c>.</summary>
    public string Endpoint { get; }
}
