// Native's message calls (see Native.Socket.cs for what the proxy is).
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

internal static unsafe partial class Native
{
    [MethodImpl(Inline)]
    internal static int MsgInit(ZlinkMsg* msg) => NativeMethods.zlink_msg_init(msg);

    [MethodImpl(Inline)]
    internal static int MsgInitSize(ZlinkMsg* msg, nuint size) => NativeMethods.zlink_msg_init_size(msg, size);

    [MethodImpl(Inline)]
    internal static int MsgInitData(ZlinkMsg* msg, void* data, nuint size, delegate* unmanaged[Cdecl]<void*, void*, void> free, void* hint) =>
        NativeMethods.zlink_msg_init_data(msg, data, size, free, hint);

    [MethodImpl(Inline)]
    internal static int MsgSend(ZlinkMsg* msg, nint socket, int flags) => NativeMethods.zlink_msg_send(msg, socket, flags);

    [MethodImpl(Inline)]
    internal static int MsgReceive(ZlinkMsg* msg, nint socket, int flags) => NativeMethods.zlink_msg_recv(msg, socket, flags);

    /// <summary>A message send that may block: retried while a signal interrupts it. 0, or the errno that ended it.</summary>
    [MethodImpl(Inline)]
    internal static int MsgSendRetrying(ZlinkMsg* msg, nint socket, int flags)
    {
        while (NativeMethods.zlink_msg_send(msg, socket, flags) < 0)
        {
            int errno = NativeMethods.zlink_errno();
            if (errno != ZlinkConstants.EINTR)
            {
                return errno;
            }
        }

        return 0;
    }

    /// <summary>A message receive that may block: retried while a signal interrupts it. 0, or the errno that ended it.</summary>
    [MethodImpl(Inline)]
    internal static int MsgReceiveRetrying(ZlinkMsg* msg, nint socket, int flags)
    {
        while (NativeMethods.zlink_msg_recv(msg, socket, flags) < 0)
        {
            int errno = NativeMethods.zlink_errno();
            if (errno != ZlinkConstants.EINTR)
            {
                return errno;
            }
        }

        return 0;
    }

    [MethodImpl(Inline)]
    internal static int MsgClose(ZlinkMsg* msg) => NativeMethods.zlink_msg_close(msg);

    [MethodImpl(Inline)]
    internal static int MsgMove(ZlinkMsg* target, ZlinkMsg* source) => NativeMethods.zlink_msg_move(target, source);

    [MethodImpl(Inline)]
    internal static int MsgCopy(ZlinkMsg* target, ZlinkMsg* source) => NativeMethods.zlink_msg_copy(target, source);

    [MethodImpl(Inline)]
    internal static void* MsgData(ZlinkMsg* msg) => NativeMethods.zlink_msg_data(msg);

    [MethodImpl(Inline)]
    internal static nuint MsgSize(ZlinkMsg* msg) => NativeMethods.zlink_msg_size(msg);

    [MethodImpl(Inline)]
    internal static int MsgMore(ZlinkMsg* msg) => NativeMethods.zlink_msg_more(msg);

    [MethodImpl(Inline)]
    internal static int MsgGet(ZlinkMsg* msg, int property) => NativeMethods.zlink_msg_get(msg, property);

    [MethodImpl(Inline)]
    internal static byte* MsgGets(ZlinkMsg* msg, byte* propertyUtf8Nul) => NativeMethods.zlink_msg_gets(msg, propertyUtf8Nul);
}
