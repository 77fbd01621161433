// Receiving: into spans (the allocation-free hot path), into zlink messages, whole frames and
// whole multipart messages. "Would block" is a result of the Try* methods, never an exception.
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    /// <summary>
    /// Receives one frame into <paramref name="buffer"/>, blocking until one arrives (or until the
    /// socket's <see cref="ReceiveTimeout"/>). Check <see cref="ReceiveMore"/> for further frames.
    /// </summary>
    /// <param name="buffer">Where the frame goes; a longer frame is truncated to fit.</param>
    /// <returns>The frame's full size, which exceeds <paramref name="buffer"/>'s length when it was truncated.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down, before or during the wait.</exception>
    /// <exception cref="ZlinkException">The receive failed; EAGAIN when <see cref="ReceiveTimeout"/> elapsed (use a TryReceive overload to get that as a result).</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public int Receive(Span<byte> buffer)
    {
        using var socket = SocketLease.Acquire(_handle, "Receive");
        fixed (byte* p = buffer)
        {
            while (true)
            {
                int size = NativeMethods.zlink_recv(socket.Value, p, (nuint)buffer.Length, 0);
                if (size >= 0)
                {
                    return size;
                }

                int errno = NativeMethods.zlink_errno();
                if (errno != ZlinkConstants.EINTR)
                {
                    Ensure.Throw(errno, "Receive");
                }
            }
        }
    }

    /// <summary>Receives one frame if one is waiting. Allocates nothing.</summary>
    /// <param name="buffer">Where the frame goes; a longer frame is truncated to fit.</param>
    /// <param name="size">The frame's full size (greater than the buffer's length when truncated); 0 when nothing was received.</param>
    /// <returns>True when a frame was received; false when none was waiting.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public bool TryReceive(Span<byte> buffer, out int size)
    {
        using var socket = SocketLease.Acquire(_handle, "TryReceive");
        fixed (byte* p = buffer)
        {
            size = NativeMethods.zlink_recv(socket.Value, p, (nuint)buffer.Length, ZlinkConstants.ZLINK_DONTWAIT);
        }

        if (size >= 0)
        {
            return true;
        }

        size = 0;
        return WouldBlock(NativeMethods.zlink_errno(), "TryReceive");
    }

    /// <summary>Receives one frame, waiting up to <paramref name="timeout"/> for it.</summary>
    /// <param name="buffer">Where the frame goes; a longer frame is truncated to fit.</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <param name="size">The frame's full size; 0 when nothing was received.</param>
    /// <returns>True when a frame was received; false when the timeout elapsed first.</returns>
    public bool TryReceive(Span<byte> buffer, TimeSpan timeout, out int size)
    {
        var deadline = Deadline.After(timeout);
        while (!TryReceive(buffer, out size))
        {
            if (!WaitFor(PollEvents.PollIn, ref deadline))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Receives one frame into <paramref name="message"/>, blocking; its previous content is released.</summary>
    /// <param name="message">The message to fill.</param>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ZlinkException">The receive failed.</exception>
    public void Receive(Message message)
    {
        ArgumentNullException.ThrowIfNull(message);
        using var socket = SocketLease.Acquire(_handle, "Receive");
        using var msg = message.Lease();
        while (NativeMethods.zlink_msg_recv((ZlinkMsg*)msg.Value, socket.Value, 0) < 0)
        {
            int errno = NativeMethods.zlink_errno();
            if (errno != ZlinkConstants.EINTR)
            {
                Ensure.Throw(errno, "Receive");
            }
        }
    }

    /// <summary>Receives one frame into <paramref name="message"/> if one is waiting.</summary>
    /// <param name="message">The message to fill.</param>
    /// <returns>True when a frame was received.</returns>
    public bool TryReceive(Message message)
    {
        ArgumentNullException.ThrowIfNull(message);
        using var socket = SocketLease.Acquire(_handle, "TryReceive");
        using var msg = message.Lease();
        if (NativeMethods.zlink_msg_recv((ZlinkMsg*)msg.Value, socket.Value, ZlinkConstants.ZLINK_DONTWAIT) >= 0)
        {
            return true;
        }

        return WouldBlock(NativeMethods.zlink_errno(), "TryReceive");
    }

    /// <summary>Receives one frame into <paramref name="message"/>, waiting up to <paramref name="timeout"/>.</summary>
    /// <param name="message">The message to fill.</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <returns>True when a frame was received; false when the timeout elapsed first.</returns>
    public bool TryReceive(Message message, TimeSpan timeout)
    {
        var deadline = Deadline.After(timeout);
        while (!TryReceive(message))
        {
            if (!WaitFor(PollEvents.PollIn, ref deadline))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Receives one whole frame of any size, blocking.</summary>
    /// <returns>A new array holding the frame.</returns>
    public byte[] ReceiveFrame() => ReceiveFrame(0, "ReceiveFrame", out _)!;

    /// <summary>Receives every frame of the next message, blocking until it arrives.</summary>
    /// <returns>The frames, in order.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    public List<byte[]> ReceiveMultipart()
    {
        var parts = new List<byte[]>();
        ReceiveRest(ReceiveFrame(0, "ReceiveMultipart", out bool more)!, more, parts);
        return parts;
    }

    /// <summary>Receives every frame of the next message if one is waiting.</summary>
    /// <param name="parts">Receives the frames (appended, in order).</param>
    /// <returns>True when a message was received; false when none was waiting.</returns>
    public bool TryReceiveMultipart(List<byte[]> parts)
    {
        ArgumentNullException.ThrowIfNull(parts);
        byte[]? first = ReceiveFrame(ZlinkConstants.ZLINK_DONTWAIT, "TryReceiveMultipart", out bool more);
        if (first is null)
        {
            return false;
        }

        ReceiveRest(first, more, parts);
        return true;
    }

    /// <summary>Receives every frame of the next message, waiting up to <paramref name="timeout"/> for it.</summary>
    /// <param name="parts">Receives the frames (appended, in order).</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <returns>True when a message was received; false when the timeout elapsed first.</returns>
    public bool TryReceiveMultipart(List<byte[]> parts, TimeSpan timeout)
    {
        var deadline = Deadline.After(timeout);
        while (!TryReceiveMultipart(parts))
        {
            if (!WaitFor(PollEvents.PollIn, ref deadline))
            {
                return false;
            }
        }

        return true;
    }

    // Messages are atomic: once the first frame is here the rest is too, so the remaining
    // frames are read with a blocking receive that does not actually wait.
    private void ReceiveRest(byte[] first, bool more, List<byte[]> parts)
    {
        parts.Add(first);
        while (more)
        {
            parts.Add(ReceiveFrame(0, "ReceiveMultipart", out more)!);
        }
    }

    /// <summary>One frame as a new array, through a zlink_msg_t on the stack; null on "would block".</summary>
    private byte[]? ReceiveFrame(int flags, string operation, out bool more)
    {
        using var socket = SocketLease.Acquire(_handle, operation);
        ZlinkMsg msg = default;
        _ = NativeMethods.zlink_msg_init(&msg);
        try
        {
            while (NativeMethods.zlink_msg_recv(&msg, socket.Value, flags) < 0)
            {
                int errno = NativeMethods.zlink_errno();
                if (flags == ZlinkConstants.ZLINK_DONTWAIT)
                {
                    WouldBlock(errno, operation);
                    more = false;
                    return null;
                }

                if (errno != ZlinkConstants.EINTR)
                {
                    Ensure.Throw(errno, operation);
                }
            }

            more = NativeMethods.zlink_msg_more(&msg) != 0;
            return new ReadOnlySpan<byte>(NativeMethods.zlink_msg_data(&msg), checked((int)NativeMethods.zlink_msg_size(&msg))).ToArray();
        }
        finally
        {
            _ = NativeMethods.zlink_msg_close(&msg);
        }
    }
}
