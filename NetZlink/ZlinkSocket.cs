// A zlink socket: identity, endpoints and lifetime. Sending, receiving, options, peers and
// monitoring live in the other Socket.*.cs parts.
//
// A socket is for one thread at a time, as in libzmq, and the binding enforces it: every native
// call takes the socket for its duration (SocketLease: plain stores on the thread the socket is
// biased to, a compare-exchange on another), so a call from another thread meanwhile is refused
// with InvalidOperationException instead of reaching the native socket. Dispose is the exception
// and may race with anything: it defers the close until the call in progress returns, and later
// calls throw ObjectDisposedException (the protocol is in SocketHandle). A thread blocked in a
// receive is released by disposing (or shutting down) the context, not by disposing the socket.
using NetZlink.Interop;

namespace NetZlink;

/// <summary>
/// A zlink socket of any <see cref="ZlinkSocketType"/>, created by <see cref="ZlinkContext.CreateSocket"/>.
/// Use it from one thread at a time (it may move between threads); <see cref="Dispose"/> may be
/// called from any thread, at any time.
/// </summary>
/// <remarks>
/// A call made while another thread is inside a call on the same socket (a blocking
/// <see cref="Receive(Span{byte})"/>, a <see cref="ZlinkPoller.Poll(TimeSpan)"/> that holds the socket,
/// or any other method) is refused before it reaches the native socket: it throws
/// <see cref="InvalidOperationException"/> whose message names the socket's type, its last bound
/// or connected endpoint, the refused operation and the thread inside, e.g.
/// <c>Socket(PAIR inproc://jobs) is in use by another thread (Receive refused: managed thread 12 is inside a call on it).</c>
/// The refused call has no effect; the socket stays usable once the other call returns.
/// </remarks>
public sealed unsafe partial class ZlinkSocket : IDisposable
{
    private readonly SocketHandle _handle;

    internal ZlinkSocket(ZlinkContext context, SocketHandle handle, ZlinkSocketType type)
    {
        Context = context;
        _handle = handle;
        Type = type;
    }

    /// <summary>The context that created the socket.</summary>
    public ZlinkContext Context { get; }

    /// <summary>The kind of socket.</summary>
    public ZlinkSocketType Type { get; }

    /// <summary>True once the socket (or its context) was disposed.</summary>
    public bool IsDisposed => _handle.IsClosing;

    /// <summary>The native handle, for the engine that drives sockets directly.</summary>
    internal SocketHandle Handle => _handle;

    /// <summary>
    /// The raw socket pointer, for code that calls the native library (through Interop.Native) directly on a thread that owns
    /// the socket. Unlike the public methods it holds no reference: the caller must make sure the
    /// socket is not disposed while it uses the pointer.
    /// </summary>
    internal nint NativeHandle => _handle.DangerousGetHandle();

    /// <summary>Accepts connections on <paramref name="endpoint"/> (tcp://, ipc://, inproc://; STREAM sockets also tls://, ws://, wss:// when the library has them).</summary>
    /// <param name="endpoint">For example <c>tcp://127.0.0.1:5555</c>, <c>tcp://127.0.0.1:*</c> (see <see cref="LastEndpoint"/>), <c>inproc://name</c>.</param>
    /// <exception cref="EndpointException">The endpoint is malformed, in use, or its transport unknown (EPROTONOSUPPORT; for tls://, ws:// or wss:// on a library without them the message names the missing <c>zlink_has</c> capability); EINVAL also when it holds a NUL character or an unpaired surrogate (refused by the binding: the library would see another endpoint).</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public void Bind(string endpoint) => EndpointCall(endpoint, "Bind", &Native.Bind);

    /// <summary>Connects to <paramref name="endpoint"/>; the connection is made in the background.</summary>
    /// <param name="endpoint">For example <c>tcp://127.0.0.1:5555</c>, <c>ws://127.0.0.1:8080/path</c> (STREAM, with ws).</param>
    /// <exception cref="EndpointException">The endpoint is malformed or its transport unknown (EPROTONOSUPPORT; the message names a missing <c>zlink_has</c> capability); EINVAL also when it holds a NUL character or an unpaired surrogate.</exception>
    /// <exception cref="ZlinkNotSupportedException">This socket type cannot connect with this native library (zlink 1.3 STREAM).</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public void Connect(string endpoint) => EndpointCall(endpoint, "Connect", &Native.Connect);

    /// <summary>Stops accepting connections on an endpoint given to <see cref="Bind"/>.</summary>
    /// <param name="endpoint">The endpoint as bound (with the actual port for a wildcard bind).</param>
    /// <exception cref="EndpointException">The endpoint is not bound (ENOENT) or malformed (EINVAL, also for a NUL character or an unpaired surrogate).</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public void Unbind(string endpoint) => EndpointCall(endpoint, "Unbind", &Native.Unbind);

    /// <summary>Drops the connection made by <see cref="Connect(string)"/> to <paramref name="endpoint"/>.</summary>
    /// <param name="endpoint">The endpoint as connected.</param>
    /// <exception cref="EndpointException">The endpoint is not connected (ENOENT) or malformed (EINVAL, also for a NUL character or an unpaired surrogate).</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public void Disconnect(string endpoint) => EndpointCall(endpoint, "Disconnect", &Native.Disconnect);

    /// <summary>Closes the socket. Idempotent, safe from any thread and concurrently with other calls.</summary>
    public void Dispose()
    {
        Context.Forget(_handle);
        _handle.Dispose();
    }

    /// <inheritdoc/>
    public override string ToString() => IsDisposed ? $"{Type} socket (disposed)" : $"{Type} socket";

    private void EndpointCall(string endpoint, string operation, delegate*<nint, byte*, int> call)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        if (Utf8Z.Problem(endpoint) is string problem)
        {
            // Passed on, the library would act on another endpoint than the one given (see Utf8Z).
            Ensure.ThrowEndpoint(ZlinkConstants.EINVAL, operation, endpoint, $"the endpoint has {problem}");
        }

        Span<byte> text = Utf8Z.Encode(endpoint, stackalloc byte[Utf8Z.StackLimit]);
        using var socket = SocketLease.Acquire(_handle, operation);
        fixed (byte* p = text)
        {
            if (call(socket.Value, p) != 0)
            {
                int errno = Native.Errno();
                Ensure.ThrowEndpoint(errno, operation, endpoint, errno == ZlinkConstants.EPROTONOSUPPORT ? EndpointTransports.Missing(endpoint) : null);
            }
        }

        if (operation is "Bind" or "Connect")
        {
            _handle.Endpoint = endpoint;
        }
    }
}
