// STREAM messages as one call: [routing id][payload] sent together, so that a refusal at the
// connection's high-water mark (NetZlink's library refuses the payload, a real zlink 1.3 the id
// frame; in both nothing stays selected) is retried as the whole message, never as a payload
// that would be taken for the next id frame. And the STREAM options of NetZlink's library: the
// framing (LENGTH by default, as on zlink 1.3; RAW; BATCH) and what the last payload was.
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    /// <summary>
    /// STREAM only: one non-blocking try to send <paramref name="payload"/> to the connection
    /// <paramref name="connection"/> names (its routing id frame, then the payload). Allocates
    /// nothing. In <see cref="StreamFraming.Length"/> (the default) the payload goes out as one body,
    /// <c>[u32 big-endian length][payload]</c>; in <see cref="StreamFraming.Raw"/> as given. An empty
    /// payload asks NetZlink's library to close that connection (<see cref="CloseConnection"/> closes on any library).
    /// </summary>
    /// <returns>True when the socket took the whole message; false when the connection's queue is at its high-water mark (nothing was taken: try again later).</returns>
    /// <exception cref="InvalidOperationException">The socket is not a STREAM socket, or another thread is using it.</exception>
    /// <exception cref="HostUnreachableException">The routing id names no connection (it has gone).</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public bool TrySendTo(RoutingId connection, ReadOnlySpan<byte> payload)
    {
        RequireStream("TrySendTo");
        using var socket = SocketLease.Acquire(_handle, "TrySendTo");
        fixed (byte* id = connection.Span)
        fixed (byte* p = payload)
        {
            if (Native.Send(socket.Value, id, (nuint)connection.Length, ZlinkConstants.ZLINK_SNDMORE | ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                return WouldBlock(Native.Errno(), "TrySendTo (routing id)");
            }

            if (Native.Send(socket.Value, p, (nuint)payload.Length, ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                return WouldBlock(Native.Errno(), "TrySendTo (payload)");
            }
        }

        return true;
    }

    /// <summary>
    /// STREAM only: sends <paramref name="payload"/> to <paramref name="connection"/>, waiting up to
    /// <paramref name="timeout"/> for room in that connection's queue; every retry sends the whole
    /// message again.
    /// </summary>
    /// <returns>True when sent; false when the timeout elapsed first (nothing was taken).</returns>
    /// <exception cref="InvalidOperationException">The socket is not a STREAM socket, or another thread is using it.</exception>
    /// <exception cref="HostUnreachableException">The connection has gone.</exception>
    public bool TrySendTo(RoutingId connection, ReadOnlySpan<byte> payload, TimeSpan timeout)
    {
        var deadline = Deadline.After(timeout);
        while (!TrySendTo(connection, payload))
        {
            if (!WaitFor(PollEvents.PollOut, ref deadline))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// STREAM only: asks the socket to close the connection (after what is queued for it); a 0x00 event follows.
    /// Sends what the loaded library reads as "close": an empty payload in NetZlink's library (any
    /// framing), the one byte <c>0x00</c> in a zlink 1.3 library (whose empty payload is an empty body on the wire).
    /// </summary>
    /// <returns>False when the connection had gone already.</returns>
    public bool CloseConnection(RoutingId connection)
    {
        RequireStream("CloseConnection");
        ReadOnlySpan<byte> close = HasStreamFramingOption() ? [] : [0];
        try
        {
            return TrySendTo(connection, close);
        }
        catch (HostUnreachableException)
        {
            return false;
        }
    }

    /// <summary>
    /// STREAM only: how payloads map to the bytes on the wire (<see cref="NetZlink.StreamFraming"/>;
    /// default <see cref="StreamFraming.Length"/>: each payload one whole body, framed on the wire as
    /// <c>[u32 big-endian length][body]</c>, as on zlink 1.3). Set it before the socket's first
    /// <see cref="Bind"/> or <see cref="Connect(string)"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The socket is not a STREAM socket.</exception>
    /// <exception cref="ZlinkNotSupportedException">The native library has no framing option (a zlink 1.3 STREAM socket always frames as Length).</exception>
    /// <exception cref="SocketOptionException">EINVAL on set: the socket was already bound or connected, or the value is not a <see cref="NetZlink.StreamFraming"/>.</exception>
    public StreamFraming StreamFraming
    {
        get => (StreamFraming)GetStreamOption(SocketOption.StreamFraming);
        set
        {
            RequireStreamOption(SocketOption.StreamFraming);
            int framing = (int)value;
            int errno;
            bool known;
            using (var socket = SocketLease.Acquire(_handle, "SetOption"))
            {
                if (Native.SetOption(socket.Value, ZlinkConstants.ZLINK_STREAM_FRAMING, &framing, sizeof(int)) == 0)
                {
                    return;
                }

                errno = Native.Errno();
                int current = 0;
                nuint size = sizeof(int);
                known = Native.GetOption(socket.Value, ZlinkConstants.ZLINK_STREAM_FRAMING, &current, &size) == 0;
            }

            if (!known)
            {
                ThrowNoStreamOption(SocketOption.StreamFraming, "SetOption");
            }

            Ensure.ThrowOption(errno, "SetOption", nameof(SocketOption.StreamFraming),
                errno == ZlinkConstants.EINVAL ? $"the framing ({value}) can only be set before the socket's first Bind or Connect, and must be Length, Raw or Batch" : null);
        }
    }

    /// <summary>
    /// STREAM only: what the payload received last was: <see cref="StreamEventKind.Data"/>, or a
    /// connection event. Needed in <see cref="StreamFraming.Raw"/> (events are zero-length payloads)
    /// and to tell a one-byte body from an event in <see cref="StreamFraming.Length"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The socket is not a STREAM socket.</exception>
    /// <exception cref="ZlinkNotSupportedException">The native library has no such option (zlink 1.3).</exception>
    public StreamEventKind StreamEvent => (StreamEventKind)GetStreamOption(SocketOption.StreamEvent);

    /// <summary>
    /// STREAM only: with a disconnect event just received, its cause: <see cref="ZlinkError.None"/>
    /// for an orderly or local close, <see cref="ZlinkError.ECONNRESET"/>, <see cref="ZlinkError.EMSGSIZE"/>
    /// (a body over <see cref="MaxMessageSize"/>), EPROTO (a malformed stream),
    /// <see cref="ZlinkError.ETIMEDOUT"/> or <see cref="ZlinkError.ECONNREFUSED"/> (a connect that failed for good); else None.
    /// </summary>
    /// <exception cref="InvalidOperationException">The socket is not a STREAM socket.</exception>
    /// <exception cref="ZlinkNotSupportedException">The native library has no such option (zlink 1.3).</exception>
    public ZlinkError StreamEventError => (ZlinkError)GetStreamOption(SocketOption.StreamEventErrno);

    /// <summary>
    /// A socket over <c>tls://</c> or <c>wss://</c> (NetZlink's library with TLS; every socket type): why the socket's last
    /// failed TLS handshake (a connect of its own, or a connection its listener accepted) failed, in
    /// OpenSSL's words: <c>certificate has expired</c>, <c>hostname mismatch</c>, <c>unable to get
    /// local issuer certificate</c>, the alert a peer sent (<c>tlsv1 alert unknown ca</c>), ...
    /// Empty before any failure; kept until the next one. Read it after the HandshakeFailed monitor
    /// event or the disconnect (EACCES, EPROTO) of the failed connect.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    /// <exception cref="ZlinkNotSupportedException">The native library has no TLS, or no such option (zlink 1.3).</exception>
    public string TlsLastError
    {
        get
        {
            try
            {
                return GetOptionString(SocketOption.TlsLastError);
            }
            catch (SocketOptionException e) when (e.Error == ZlinkError.EINVAL)
            {
                ThrowNoTls(SocketOption.TlsLastError);
                return string.Empty;
            }
        }
    }

    /// <summary>
    /// A socket over <c>tls://</c> or <c>wss://</c> (every socket type): the X509 verification result of the socket's last
    /// failed TLS handshake, an OpenSSL <c>X509_V_ERR_*</c> code (10 expired, 62 hostname mismatch, 20
    /// unknown issuer, 18/19 self-signed), or 0 when verification was not what failed. See
    /// <see cref="TlsLastError"/>; <see cref="DescribeTlsFailure"/> puts the two in one sentence.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    /// <exception cref="ZlinkNotSupportedException">The native library has no TLS, or no such option (zlink 1.3).</exception>
    public int TlsLastVerifyResult
    {
        get
        {
            int value = 0;
            nuint size = sizeof(int);
            int errno = GetOptionErrno(SocketOption.TlsLastVerifyResult, &value, &size);
            if (errno == ZlinkConstants.EINVAL)
            {
                ThrowNoTls(SocketOption.TlsLastVerifyResult);
            }

            if (errno != 0)
            {
                Ensure.ThrowOption(errno, "GetOption", nameof(SocketOption.TlsLastVerifyResult));
            }

            return value;
        }
    }

    /// <summary>
    /// The reason of a failed TLS handshake as one phrase: <c>TLS: certificate has expired (X509
    /// verify result 10)</c>; without a verify result, <c>TLS: wrong version number</c>; null when
    /// <paramref name="error"/> is empty (no failure).
    /// </summary>
    /// <param name="error">A <see cref="TlsLastError"/>.</param>
    /// <param name="verifyResult">A <see cref="TlsLastVerifyResult"/>.</param>
    public static string? DescribeTlsFailure(string? error, int verifyResult) =>
        string.IsNullOrEmpty(error) ? null
        : verifyResult != 0 ? $"TLS: {error} (X509 verify result {verifyResult})"
        : $"TLS: {error}";

    /// <summary>
    /// This socket's <see cref="TlsLastError"/> and <see cref="TlsLastVerifyResult"/> as one phrase
    /// (<see cref="DescribeTlsFailure"/>); null when there is none, or the socket cannot say (not
    /// STREAM, no TLS, or another thread is inside a call on it).
    /// </summary>
    internal string? TryDescribeTlsFailure()
    {
        try
        {
            return DescribeTlsFailure(TlsLastError, TlsLastVerifyResult);
        }
        catch (Exception e) when (e is ZlinkException or InvalidOperationException or ObjectDisposedException)
        {
            return null;
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowNoTls(SocketOption option) =>
        Ensure.ThrowOption(ZlinkConstants.ENOTSUP, "GetOption", option.ToString(),
            $"this native library has no STREAM option {(int)option} (EINVAL): it needs NetZlink's libzlink.so built with TLS (zlink_has(\"tls\"))");

    /// <summary>True when the library answers ZLINK_STREAM_FRAMING on this socket (NetZlink's does, a zlink 1.3 library does not).</summary>
    private bool HasStreamFramingOption()
    {
        int framing = 0;
        nuint size = sizeof(int);
        return GetOptionErrno(SocketOption.StreamFraming, &framing, &size) == 0;
    }

    /// <summary>An int STREAM option of NetZlink's library, reported as not supported by a library without it.</summary>
    private int GetStreamOption(SocketOption option)
    {
        RequireStreamOption(option);
        int value = 0;
        nuint size = sizeof(int);
        int errno = GetOptionErrno(option, &value, &size);
        if (errno == ZlinkConstants.EINVAL)
        {
            ThrowNoStreamOption(option, "GetOption");
        }

        if (errno != 0)
        {
            Ensure.ThrowOption(errno, "GetOption", option.ToString());
        }

        return value;
    }

    private void RequireStreamOption(SocketOption option)
    {
        if (Type != ZlinkSocketType.Stream)
        {
            throw new InvalidOperationException($"Socket({Type}).{option}: only a STREAM socket has this option.");
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowNoStreamOption(SocketOption option, string operation) =>
        Ensure.ThrowOption(ZlinkConstants.ENOTSUP, operation, option.ToString(),
            $"this native library has no STREAM option {(int)option} (EINVAL): a zlink 1.3 STREAM socket always frames its messages as Length ([u32 big-endian length][body]) and marks events only by their one-byte payloads; StreamFraming, StreamEvent and StreamEventError need NetZlink's libzlink.so");

    private void RequireStream(string operation)
    {
        if (Type != ZlinkSocketType.Stream)
        {
            throw new InvalidOperationException($"Socket({Type}).{operation}: only a STREAM socket sends to a routing id this way.");
        }
    }
}
