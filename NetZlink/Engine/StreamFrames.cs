// The two STREAM frame idioms every STREAM user repeats: select a connection by sending its
// 4-byte routing id with SNDMORE, and close a connection with [id] + an empty payload.
using System.Buffers.Binary;
using NetZlink.Interop;

namespace NetZlink.Engine;

internal static unsafe class StreamFrames
{
    /// <summary>Sends the id frame (SNDMORE, DONTWAIT); false with the cause in zlink_errno().</summary>
    internal static bool SendRoutingId(nint socket, uint routingId)
    {
        byte* id = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(new Span<byte>(id, 4), routingId);
        return NativeMethods.zlink_send(socket, id, 4, ZlinkConstants.ZLINK_SNDMORE | ZlinkConstants.ZLINK_DONTWAIT) >= 0;
    }

    /// <summary>Asks the socket to close a connection; a failure means it is gone already.</summary>
    internal static void RequestClose(nint socket, uint routingId)
    {
        if (SendRoutingId(socket, routingId))
        {
            _ = NativeMethods.zlink_send(socket, null, 0, ZlinkConstants.ZLINK_DONTWAIT);
        }
    }
}
