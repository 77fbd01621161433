// STREAM messages as one call: [routing id][payload] sent together, so that a refusal at the
// connection's high-water mark (NetZlink's library refuses the payload, a real zlink 1.3 the id
// frame; in both nothing stays selected) is retried as the whole message, never as a payload
// that would be taken for the next id frame.
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    /// <summary>
    /// STREAM only: one non-blocking try to send <paramref name="payload"/> to the connection
    /// <paramref name="connection"/> names (its routing id frame, then the payload). Allocates
    /// nothing. An empty payload asks the socket to close that connection.
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
            if (NativeMethods.zlink_send(socket.Value, id, (nuint)connection.Length, ZlinkConstants.ZLINK_SNDMORE | ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                return WouldBlock(NativeMethods.zlink_errno(), "TrySendTo (routing id)");
            }

            if (NativeMethods.zlink_send(socket.Value, p, (nuint)payload.Length, ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                return WouldBlock(NativeMethods.zlink_errno(), "TrySendTo (payload)");
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

    /// <summary>STREAM only: asks the socket to close the connection (after what is queued for it); a 0x00 event follows.</summary>
    /// <returns>False when the connection had gone already.</returns>
    public bool CloseConnection(RoutingId connection)
    {
        try
        {
            return TrySendTo(connection, ReadOnlySpan<byte>.Empty);
        }
        catch (HostUnreachableException)
        {
            return false;
        }
    }

    private void RequireStream(string operation)
    {
        if (Type != ZlinkSocketType.Stream)
        {
            throw new InvalidOperationException($"Socket({Type}).{operation}: only a STREAM socket sends to a routing id this way.");
        }
    }
}
