// Several native calls under one hold of the socket: for an internal owner that already serialises
// every use of the socket itself (the services' shared ROUTER, under its gate), so the per-call
// hold (SocketLease) is taken once per batch instead of once per frame. Errors map as the public
// Try* calls map them.
using System.Runtime.CompilerServices;
using NetZlink.Interop;

namespace NetZlink;

public sealed unsafe partial class ZlinkSocket
{
    /// <summary>Holds the socket for several calls (as one public call would): dispose it when done.</summary>
    internal SocketLease Hold(string operation) => SocketLease.Acquire(_handle, operation);

    /// <summary>As <see cref="TrySend(ReadOnlySpan{byte}, SendFlags)"/>, on a socket held with <see cref="Hold"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static bool TrySendHeld(nint socket, ReadOnlySpan<byte> data, SendFlags flags)
    {
        fixed (byte* p = data)
        {
            if (Native.Send(socket, p, (nuint)data.Length, (int)(flags | SendFlags.DontWait)) >= 0)
            {
                return true;
            }
        }

        return SendWouldBlock(Native.Errno(), "TrySend", socket);
    }

    /// <summary>As <see cref="TryReceive(ZlinkMessage)"/>, into a message held with <see cref="ZlinkMessage.Lease"/>, on a socket held with <see cref="Hold"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static bool TryReceiveHeld(nint socket, ZlinkMsg* message) =>
        Native.MsgReceive(message, socket, ZlinkConstants.ZLINK_DONTWAIT) >= 0 || WouldBlock(Native.Errno(), "TryReceive");
}
