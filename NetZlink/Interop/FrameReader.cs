// Whole frames as new arrays, read through a zlink_msg_t on the stack, on a socket the caller
// already holds (a SocketLease, or the owner word of pending async operations). Shared by the
// blocking and Try* multipart receives and by ReceiveMultipartAsync.
namespace NetZlink.Interop;

internal static unsafe class FrameReader
{
    /// <summary>One frame as a new array; null on "would block" when <paramref name="flags"/> is DONTWAIT.</summary>
    internal static byte[]? ReceiveFrame(nint socket, int flags, string operation, out bool more)
    {
        ZlinkMsg msg = default;
        _ = NativeMethods.zlink_msg_init(&msg);
        try
        {
            while (NativeMethods.zlink_msg_recv(&msg, socket, flags) < 0)
            {
                int errno = NativeMethods.zlink_errno();
                if (flags == ZlinkConstants.ZLINK_DONTWAIT)
                {
                    if (errno is not (ZlinkConstants.EAGAIN or ZlinkConstants.EINTR))
                    {
                        Ensure.Throw(errno, operation);
                    }

                    more = false;
                    return null;
                }

                if (errno != ZlinkConstants.EINTR)
                {
                    Ensure.ThrowBlocking(errno, operation, socket, sending: false);
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

    /// <summary>
    /// Every frame of the next message, appended to <paramref name="parts"/>; false (nothing read)
    /// on "would block" with DONTWAIT. Messages are atomic: once the first frame is here the rest
    /// is too, so the remaining frames are read with a blocking receive that does not wait.
    /// </summary>
    internal static bool ReceiveMultipart(nint socket, List<byte[]> parts, int flags, string operation)
    {
        byte[]? first = ReceiveFrame(socket, flags, operation, out bool more);
        if (first is null)
        {
            return false;
        }

        parts.Add(first);
        while (more)
        {
            parts.Add(ReceiveFrame(socket, 0, operation, out more)!);
        }

        return true;
    }
}
