// The checked layer between NativeMethods and the public types: it turns "-1 and errno" into
// an exception. The one table from errno to exception type is Create below. The throw helpers
// are not inlined, so a caller's hot path carries only a compare and a call.
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal static unsafe class Ensure
{
    /// <summary>
    /// Throws for a failed <paramref name="operation"/> (e.g. "Send") that has no endpoint or
    /// option; <paramref name="notSupportedHint"/> is added to the message when the error is ENOTSUP.
    /// </summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void Throw(int errno, string operation, string? notSupportedHint = null) =>
        throw Create(errno, ErrorScope.General, operation, target: null, errno == ZlinkConstants.ENOTSUP ? notSupportedHint : null);

    /// <summary>
    /// Throws for a failed send on <paramref name="socket"/> (still held by the caller). On a STREAM
    /// socket EINVAL means the frame came without the routing id frame that selects a connection:
    /// the message says so and what to send instead; anything else goes to <see cref="Throw"/>.
    /// </summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowSend(int errno, string operation, nint socket)
    {
        if (errno == ZlinkConstants.EINVAL && IsStream(socket))
        {
            throw Create(errno, ErrorScope.General, operation, target: null, StreamPayloadWithoutId);
        }

        Throw(errno, operation);
    }

    /// <summary>The hint for a STREAM frame that no routing id frame selected a connection for.</summary>
    internal const string StreamPayloadWithoutId =
        "a STREAM socket takes a message as two frames: first the connection's 4-byte routing id with SendFlags.SendMore, then one payload; "
        + "this frame came with no routing id frame before it, so it names no connection and nothing was sent. "
        + "Send the routing id first (SendMore), or use TrySendTo(routingId, payload) or SendMultipart(routingId, payload)";

    private static bool IsStream(nint socket)
    {
        int type = -1;
        nuint size = sizeof(int);
        return NativeMethods.zlink_getsockopt(socket, ZlinkConstants.ZLINK_TYPE, &type, &size) == 0 && type == ZlinkConstants.ZLINK_STREAM;
    }

    /// <summary>
    /// Throws for a failed send or receive that was allowed to block: EAGAIN then means its
    /// SNDTIMEO or RCVTIMEO passed, which is a <see cref="ZlinkTimeoutException"/>; anything else
    /// goes to <see cref="Throw"/>. <paramref name="socket"/> is still held by the caller (the
    /// message names the timeout it reads from it).
    /// </summary>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowBlocking(int errno, string operation, nint socket, bool sending)
    {
        if (errno == ZlinkConstants.EAGAIN)
        {
            int timeout = -1;
            nuint size = sizeof(int);
            _ = NativeMethods.zlink_getsockopt(socket, sending ? ZlinkConstants.ZLINK_SNDTIMEO : ZlinkConstants.ZLINK_RCVTIMEO, &timeout, &size);
            string what = sending
                ? $"its SendTimeout ({timeout} ms) passed before the frame could be queued"
                : $"its ReceiveTimeout ({timeout} ms) passed before a frame arrived";
            throw new ZlinkTimeoutException(errno, operation, timeout, $"{operation} timed out: {what} (EAGAIN (11); the Try* methods return false instead).");
        }

        if (sending)
        {
            ThrowSend(errno, operation, socket);
        }

        Throw(errno, operation);
    }

    /// <summary>Throws for a failed endpoint operation; the message reads <c>Bind("tcp://…") failed: …</c>.</summary>
    /// <remarks><paramref name="hint"/>, when given, says why the binding refused the call itself.</remarks>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowEndpoint(int errno, string operation, string endpoint, string? hint = null) =>
        throw Create(errno, ErrorScope.Endpoint, operation, endpoint, hint);

    /// <summary>Throws for a failed option operation; the message reads <c>SetOption(Linger) failed: …</c>.</summary>
    /// <remarks><paramref name="hint"/>, when given, says why the binding refused the value itself.</remarks>
    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowOption(int errno, string operation, string option, string? hint = null) =>
        throw Create(errno, ErrorScope.Option, operation, option, hint);

    /// <summary>The table: ETERM, EHOSTUNREACH and ENOTSUP have their own types whatever the call;
    /// other errors are typed by what the call was working on.</summary>
    internal static ZlinkException Create(int errno, ErrorScope scope, string operation, string? target, string? hint)
    {
        string description = Describe(errno);
        if (hint is not null)
        {
            description = $"{description} ({hint})";
        }

        string what = scope switch
        {
            ErrorScope.Endpoint => $"{operation}(\"{Utf8Z.Printable(target!)}\")",
            ErrorScope.Option => $"{operation}({target})",
            _ => operation,
        };

        return errno switch
        {
            ZlinkConstants.ETERM => new ContextTerminatedException(errno, what, description),
            ZlinkConstants.EHOSTUNREACH => new HostUnreachableException(errno, what, description),
            ZlinkConstants.ENOTSUP => new ZlinkNotSupportedException(errno, what, description),
            _ when scope == ErrorScope.Endpoint => new EndpointException(errno, what, description, target!),
            _ when scope == ErrorScope.Option => new SocketOptionException(errno, what, description, target!),
            _ => new ZlinkException(errno, what, description),
        };
    }

    /// <summary>The library's text for <paramref name="errno"/>.</summary>
    internal static string Describe(int errno)
    {
        byte* text = NativeMethods.zlink_strerror(errno);
        return text is null ? "unknown error" : Marshal.PtrToStringUTF8((nint)text) ?? "unknown error";
    }
}
