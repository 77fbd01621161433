// How a STREAM socket maps its payloads to the bytes on the wire (ZLINK_STREAM_FRAMING).
namespace NetZlink;

/// <summary>
/// The framing of a STREAM socket (<see cref="ZlinkSocket.StreamFraming"/>, option
/// <see cref="SocketOption.StreamFraming"/>): how payloads map to the bytes of each connection.
/// Set it before the socket's first bind or connect. Only NetZlink's library has the option; a
/// real zlink 1.3 STREAM socket always works as <see cref="Length"/>.
/// </summary>
public enum StreamFraming
{
    /// <summary>
    /// The default, as on zlink 1.3: every message is <c>[u32 big-endian body length][body]</c> on
    /// the wire, and each received payload is one whole body (a body longer than the buffer is cut,
    /// and the receive returns its full size). Sending a payload writes its length and the payload.
    /// An empty payload, and a one-byte payload <c>0x00</c>, close the connection, so a one-byte
    /// body <c>0x00</c> cannot be sent; a received one-byte body looks like a connection event, and
    /// <see cref="ZlinkSocket.StreamEvent"/> tells them apart. A body of length 0, or longer than
    /// <see cref="SocketOption.MaxMessageSize"/>, ends the connection.
    /// </summary>
    Length = 0,

    /// <summary>
    /// Bytes as they arrive, any length (never held back, never empty); bytes that do not fit the
    /// buffer stay for the next payload. Connection events are zero-length payloads: read
    /// <see cref="ZlinkSocket.StreamEvent"/> to know which. Sending writes the bytes as given; an empty payload closes.
    /// </summary>
    Raw = 1,

    /// <summary>
    /// <see cref="Length"/>'s wire, for packet engines: each received payload holds one or more whole
    /// packets, headers included, as many as fit the buffer, and may be empty (nothing complete yet).
    /// When the first packet does not fit, nothing is taken: the receive returns that packet's size and
    /// the same payload comes again on the next receive, for a buffer that large. A sent payload must be
    /// whole packets with bodies of at least one byte (else EINVAL, nothing sent). Events are the
    /// one-byte payloads <c>0x01</c>/<c>0x00</c>; a data payload is never one byte.
    /// </summary>
    Batch = 2,
}
