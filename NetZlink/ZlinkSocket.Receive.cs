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
    /// <exception cref="ZlinkTimeoutException"><see cref="ReceiveTimeout"/> elapsed first (use a TryReceive overload to get that as a result).</exception>
    /// <exception cref="ZlinkException">The receive failed.</exception>
    /// <exception cref="ObjectDisposedException">The socket was disposed.</exception>
    public int Receive(Span<byte> buffer)
    {
        using var socket = SocketLease.Acquire(_handle, "Receive");
        fixed (byte* p = buffer)
        {
            int size = Native.ReceiveRetrying(socket.Value, p, (nuint)buffer.Length, 0);
            if (size < 0)
            {
                Ensure.ThrowBlocking(-size, "Receive", socket.Value, sending: false);
            }

            return size;
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
            size = Native.Receive(socket.Value, p, (nuint)buffer.Length, ZlinkConstants.ZLINK_DONTWAIT);
        }

        if (size >= 0)
        {
            return true;
        }

        size = 0;
        return WouldBlock(Native.Errno(), "TryReceive");
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
    /// <exception cref="ZlinkTimeoutException"><see cref="ReceiveTimeout"/> elapsed first.</exception>
    /// <exception cref="ZlinkException">The receive failed.</exception>
    public void Receive(ZlinkMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        using var socket = SocketLease.Acquire(_handle, "Receive");
        using var msg = message.Lease();
        int errno = Native.MsgReceiveRetrying((ZlinkMsg*)msg.Value, socket.Value, 0);
        if (errno != 0)
        {
            Ensure.ThrowBlocking(errno, "Receive", socket.Value, sending: false);
        }
    }

    /// <summary>Receives one frame into <paramref name="message"/> if one is waiting.</summary>
    /// <param name="message">The message to fill.</param>
    /// <returns>True when a frame was received.</returns>
    public bool TryReceive(ZlinkMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        using var socket = SocketLease.Acquire(_handle, "TryReceive");
        using var msg = message.Lease();
        if (Native.MsgReceive((ZlinkMsg*)msg.Value, socket.Value, ZlinkConstants.ZLINK_DONTWAIT) >= 0)
        {
            return true;
        }

        return WouldBlock(Native.Errno(), "TryReceive");
    }

    /// <summary>Receives one frame into <paramref name="message"/>, waiting up to <paramref name="timeout"/>.</summary>
    /// <param name="message">The message to fill.</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <returns>True when a frame was received; false when the timeout elapsed first.</returns>
    public bool TryReceive(ZlinkMessage message, TimeSpan timeout)
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
    public byte[] ReceiveFrame()
    {
        using var socket = SocketLease.Acquire(_handle, "ReceiveFrame");
        return FrameReader.ReceiveFrame(socket.Value, 0, "ReceiveFrame", out _)!;
    }

    /// <summary>Receives every frame of the next message, blocking until it arrives.</summary>
    /// <returns>The frames, in order.</returns>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    public List<byte[]> ReceiveMultipart()
    {
        var parts = new List<byte[]>();
        ReceiveMultipart(parts, 0, "ReceiveMultipart");
        return parts;
    }

    /// <summary>Receives every frame of the next message if one is waiting.</summary>
    /// <param name="parts">Receives the frames (appended, in order).</param>
    /// <returns>True when a message was received; false when none was waiting.</returns>
    public bool TryReceiveMultipart(List<byte[]> parts)
    {
        ArgumentNullException.ThrowIfNull(parts);
        return ReceiveMultipart(parts, ZlinkConstants.ZLINK_DONTWAIT, "TryReceiveMultipart");
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

    /// <summary>The whole message under one lease, so no other call can come between its frames.</summary>
    private bool ReceiveMultipart(List<byte[]> parts, int flags, string operation)
    {
        using var socket = SocketLease.Acquire(_handle, operation);
        return FrameReader.ReceiveMultipart(socket.Value, parts, flags, operation);
    }
}
