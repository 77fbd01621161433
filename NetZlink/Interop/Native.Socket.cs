// The one route from the binding to the native library (docs/binding.md#one-route-to-native):
// every file outside Interop/ calls Native, never NativeMethods or LibcMethods. One wrapper per
// native call; the loops that retry a call a signal interrupted (EINTR) live here once. The
// wrappers are static, allocate nothing and are inlined, so a hot path pays only the call itself.
// Callers still take their lease (SocketLease, HandleLease) and pin their buffers: a public call
// often makes several native calls under one lease, and the lease is what says which public type
// the socket belongs to.
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

internal static unsafe partial class Native
{
    private const MethodImplOptions Inline = MethodImplOptions.AggressiveInlining;

    /// <summary>The errno of this thread's last failed zlink call.</summary>
    [MethodImpl(Inline)]
    internal static int Errno() => NativeMethods.zlink_errno();

    [MethodImpl(Inline)]
    internal static nint Socket(nint context, int type) => NativeMethods.zlink_socket(context, type);

    [MethodImpl(Inline)]
    internal static int Close(nint socket) => NativeMethods.zlink_close(socket);

    /// <summary>0, or -1 with <see cref="Errno"/> set.</summary>
    [MethodImpl(Inline)]
    internal static int SetOption(nint socket, int option, void* value, nuint length) =>
        NativeMethods.zlink_setsockopt(socket, option, value, length);

    /// <summary>0, or the errno of the failure.</summary>
    [MethodImpl(Inline)]
    internal static int SetOptionOrErrno(nint socket, int option, void* value, nuint length) =>
        NativeMethods.zlink_setsockopt(socket, option, value, length) == 0 ? 0 : NativeMethods.zlink_errno();

    /// <summary>0, or -1 with <see cref="Errno"/> set.</summary>
    [MethodImpl(Inline)]
    internal static int GetOption(nint socket, int option, void* value, nuint* length) =>
        NativeMethods.zlink_getsockopt(socket, option, value, length);

    /// <summary>An int option's value, or <paramref name="otherwise"/> when it cannot be read.</summary>
    internal static int GetIntOption(nint socket, int option, int otherwise)
    {
        int value = 0;
        nuint size = sizeof(int);
        return NativeMethods.zlink_getsockopt(socket, option, &value, &size) == 0 ? value : otherwise;
    }

    [MethodImpl(Inline)]
    internal static int Bind(nint socket, byte* endpointUtf8Nul) => NativeMethods.zlink_bind(socket, endpointUtf8Nul);

    [MethodImpl(Inline)]
    internal static int Connect(nint socket, byte* endpointUtf8Nul) => NativeMethods.zlink_connect(socket, endpointUtf8Nul);

    [MethodImpl(Inline)]
    internal static int Unbind(nint socket, byte* endpointUtf8Nul) => NativeMethods.zlink_unbind(socket, endpointUtf8Nul);

    [MethodImpl(Inline)]
    internal static int Disconnect(nint socket, byte* endpointUtf8Nul) => NativeMethods.zlink_disconnect(socket, endpointUtf8Nul);

    /// <summary>Bytes queued, or -1 with <see cref="Errno"/> set (EAGAIN under DONTWAIT).</summary>
    [MethodImpl(Inline)]
    internal static int Send(nint socket, byte* buffer, nuint length, int flags) =>
        NativeMethods.zlink_send(socket, buffer, length, flags);

    /// <summary>Bytes received (the frame's size, possibly more than <paramref name="length"/>), or -1 with <see cref="Errno"/> set.</summary>
    [MethodImpl(Inline)]
    internal static int Receive(nint socket, byte* buffer, nuint length, int flags) =>
        NativeMethods.zlink_recv(socket, buffer, length, flags);

    /// <summary>A send that may block: retried while a signal interrupts it. 0, or the errno that ended it.</summary>
    [MethodImpl(Inline)]
    internal static int SendRetrying(nint socket, byte* buffer, nuint length, int flags)
    {
        while (NativeMethods.zlink_send(socket, buffer, length, flags) < 0)
        {
            int errno = NativeMethods.zlink_errno();
            if (errno != ZlinkConstants.EINTR)
            {
                return errno;
            }
        }

        return 0;
    }

    /// <summary>A receive that may block: retried while a signal interrupts it. The size, or -errno.</summary>
    [MethodImpl(Inline)]
    internal static int ReceiveRetrying(nint socket, byte* buffer, nuint length, int flags)
    {
        while (true)
        {
            int size = NativeMethods.zlink_recv(socket, buffer, length, flags);
            if (size >= 0)
            {
                return size;
            }

            int errno = NativeMethods.zlink_errno();
            if (errno != ZlinkConstants.EINTR)
            {
                return -errno;
            }
        }
    }

    /// <summary>
    /// One zlink_poll. A wait a signal interrupted counts as "nothing ready" (0); any other
    /// failure is -1 with <see cref="Errno"/> set.
    /// </summary>
    [MethodImpl(Inline)]
    internal static int Poll(ZlinkPollItem* items, int count, nint timeoutMs)
    {
        int ready = NativeMethods.zlink_poll(items, count, timeoutMs);
        return ready >= 0 || NativeMethods.zlink_errno() != ZlinkConstants.EINTR ? ready : 0;
    }

    /// <summary>True when <paramref name="errno"/> only says "not now": EAGAIN, or a signal (EINTR).</summary>
    [MethodImpl(Inline)]
    internal static bool IsRetry(int errno) => errno is ZlinkConstants.EAGAIN or ZlinkConstants.EINTR;
}
