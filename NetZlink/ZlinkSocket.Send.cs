// Sending: spans (the allocation-free hot path), zlink messages (zero-copy), multipart.
// "Would block" is a result of the Try* methods, never an exception.
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    /// <summary>Sends one frame, blocking until it is queued (or until the socket's <see cref="SendTimeout"/>).</summary>
    /// <param name="data">The frame; copied before the call returns.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames of the message follow.</param>
    /// <exception cref="ZlinkTimeoutException"><see cref="SendTimeout"/> elapsed first (use <see cref="TrySend(ReadOnlySpan{byte}, TimeSpan, SendFlags)"/> to get that as a result).</exception>
    /// <exception cref="ZlinkException">The send failed; EAGAIN when <see cref="SendFlags.DontWait"/> was given and the frame could not be queued (use <see cref="TrySend(ReadOnlySpan{byte}, SendFlags)"/> to get that as a result).</exception>
    /// <exception cref="HostUnreachableException">ROUTER (mandatory) or STREAM: the routing id names no peer.</exception>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public void Send(ReadOnlySpan<byte> data, SendFlags flags = SendFlags.None)
    {
        using var socket = SocketLease.Acquire(_handle, "Send");
        fixed (byte* p = data)
        {
            int errno = Native.SendRetrying(socket.Value, p, (nuint)data.Length, (int)flags);
            if (errno != 0)
            {
                ThrowSendFailure(errno, socket.Value, flags);
            }
        }
    }

    /// <summary>Sends one frame that more frames of the same message will follow.</summary>
    /// <param name="data">The frame.</param>
    public void SendMore(ReadOnlySpan<byte> data) => Send(data, SendFlags.SendMore);

    /// <summary>
    /// Sends one frame without blocking. Allocates nothing. On a STREAM socket a message is the
    /// 4-byte routing id frame (<see cref="SendFlags.SendMore"/>) and one payload frame; when either
    /// is refused (false) nothing stays selected, so retry the whole message, id first. NetZlink's
    /// native library refuses the payload at the connection's high-water mark, a real zlink 1.3
    /// library the id frame: the same retry works for both.
    /// </summary>
    /// <param name="data">The frame; copied (or written to the connection) before the call returns.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames follow; DontWait is implied.</param>
    /// <returns>True when sent; false when the socket would block (high-water mark, no peer yet).</returns>
    /// <exception cref="HostUnreachableException">ROUTER (mandatory) or STREAM: the routing id names no peer.</exception>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ZlinkException">Any other failure.</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public bool TrySend(ReadOnlySpan<byte> data, SendFlags flags = SendFlags.None)
    {
        using var socket = SocketLease.Acquire(_handle, "TrySend");
        fixed (byte* p = data)
        {
            if (Native.Send(socket.Value, p, (nuint)data.Length, (int)(flags | SendFlags.DontWait)) >= 0)
            {
                return true;
            }
        }

        return SendWouldBlock(Native.Errno(), "TrySend", socket.Value);
    }

    /// <summary>
    /// Sends one frame, waiting up to <paramref name="timeout"/> for room. On a STREAM socket a
    /// refused frame leaves nothing selected, so a payload cannot wait for room alone: use
    /// <see cref="TrySendTo(RoutingId, ReadOnlySpan{byte}, TimeSpan)"/>, which retries the whole message.
    /// </summary>
    /// <param name="data">The frame.</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames follow.</param>
    /// <returns>True when sent; false when the timeout elapsed first.</returns>
    public bool TrySend(ReadOnlySpan<byte> data, TimeSpan timeout, SendFlags flags = SendFlags.None)
    {
        var deadline = Deadline.After(timeout);
        while (!TrySend(data, flags))
        {
            if (!WaitFor(PollEvents.PollOut, ref deadline))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Sends a message, blocking until it is queued. On success the message is left empty.</summary>
    /// <param name="message">The message; ownership of its data passes to the socket.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames follow.</param>
    /// <exception cref="ZlinkTimeoutException"><see cref="SendTimeout"/> elapsed first (the message is left intact).</exception>
    /// <exception cref="ZlinkException">The send failed (the message is left intact).</exception>
    public void Send(ZlinkMessage message, SendFlags flags = SendFlags.None)
    {
        ArgumentNullException.ThrowIfNull(message);
        using var socket = SocketLease.Acquire(_handle, "Send");
        using var msg = message.Lease();
        int errno = Native.MsgSendRetrying((ZlinkMsg*)msg.Value, socket.Value, (int)flags);
        if (errno != 0)
        {
            ThrowSendFailure(errno, socket.Value, flags);
        }
    }

    /// <summary>Sends a message without blocking. On success the message is left empty; otherwise intact.</summary>
    /// <param name="message">The message.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames follow; DontWait is implied.</param>
    /// <returns>True when sent; false when the socket would block.</returns>
    public bool TrySend(ZlinkMessage message, SendFlags flags = SendFlags.None)
    {
        ArgumentNullException.ThrowIfNull(message);
        using var socket = SocketLease.Acquire(_handle, "TrySend");
        using var msg = message.Lease();
        if (Native.MsgSend((ZlinkMsg*)msg.Value, socket.Value, (int)(flags | SendFlags.DontWait)) >= 0)
        {
            return true;
        }

        return SendWouldBlock(Native.Errno(), "TrySend", socket.Value);
    }

    /// <summary>Sends a multipart message, blocking; the peer receives all parts or none.</summary>
    /// <param name="parts">The frames, at least one; on STREAM exactly two, <c>[routing id][payload]</c>.</param>
    /// <exception cref="ArgumentException">No frame; or a STREAM socket and not exactly two frames (nothing was sent).</exception>
    public void SendMultipart(params ReadOnlySpan<byte[]> parts)
    {
        if (parts.IsEmpty)
        {
            throw new ArgumentException("A message has at least one frame.", nameof(parts));
        }

        if (StreamMessageProblem(parts.Length, "SendMultipart") is string problem)
        {
            throw new ArgumentException(problem, nameof(parts));
        }

        for (int i = 0; i < parts.Length - 1; i++)
        {
            Send(parts[i], SendFlags.SendMore);
        }

        Send(parts[^1]);
    }

    /// <summary>A blocking send's EAGAIN is its timeout; with DontWait given it is a plain "would block" error.</summary>
    private static void ThrowSendFailure(int errno, nint socket, SendFlags flags)
    {
        if ((flags & SendFlags.DontWait) != 0)
        {
            Ensure.ThrowSend(errno, "Send", socket);
        }

        Ensure.ThrowBlocking(errno, "Send", socket, sending: true);
    }

    /// <summary>As <see cref="WouldBlock"/>, for a send: a STREAM frame without its routing id frame is explained.</summary>
    private static bool SendWouldBlock(int errno, string operation, nint socket)
    {
        if (!Native.IsRetry(errno))
        {
            Ensure.ThrowSend(errno, operation, socket);
        }

        return false;
    }

    /// <summary>
    /// STREAM: a message is exactly <c>[routing id][payload]</c>; null when <paramref name="frames"/>
    /// fit that (or the socket is not STREAM), else why not. Checked before any frame goes out: a
    /// third frame would be refused (EINVAL) after the first two were sent.
    /// </summary>
    private string? StreamMessageProblem(int frames, string operation) =>
        Type == ZlinkSocketType.Stream && frames != 2
            ? $"{operation} on a STREAM socket: a STREAM message is exactly two frames, the connection's 4-byte routing id and one payload; this one has {Plural.Of(frames, "frame")}. Nothing was sent."
            : null;

    /// <summary>EAGAIN (and a stray EINTR) mean "try again"; anything else is thrown.</summary>
    private static bool WouldBlock(int errno, string operation)
    {
        if (!Native.IsRetry(errno))
        {
            Ensure.Throw(errno, operation);
        }

        return false;
    }

    /// <summary>
    /// Waits until the socket reports <paramref name="events"/> or the deadline passes. When the
    /// previous wait said "ready" and the caller's attempt still failed (a STREAM socket's
    /// per-connection high-water mark is not what POLLOUT reports), it sleeps a millisecond
    /// first, so a Try-with-timeout loop never spins.
    /// </summary>
    /// <returns>False when the deadline passed.</returns>
    private bool WaitFor(PollEvents events, ref Deadline deadline)
    {
        int remaining = deadline.RemainingMilliseconds();
        if (remaining == 0)
        {
            return false;
        }

        using var socket = SocketLease.Acquire(_handle, "Poll");
        var item = new ZlinkPollItem { Socket = socket.Value, Events = (short)events };
        int ready = Native.Poll(&item, 1, remaining);
        if (ready < 0)
        {
            Ensure.Throw(Native.Errno(), "Poll");
        }
        else if (ready > 0 && deadline.ReadyBefore())
        {
            Thread.Sleep(1);
        }

        return true;
    }
}
