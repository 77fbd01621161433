// The two STREAM frame idioms every STREAM user repeats: select a connection by sending its
// 4-byte routing id with SNDMORE, and close a connection: [id] + an empty payload in NetZlink's
// library (every framing), [id] + the one byte 0x00 in a zlink 1.3 library (whose empty payload
// is an empty message on the wire). The engine's Length framing is the zlink 1.3 case; NetZlink's
// library closes on 0x00 in Length and Batch too, so only Raw, where 0x00 is data, sends empty.
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
        return Native.Send(socket, id, 4, ZlinkConstants.ZLINK_SNDMORE | ZlinkConstants.ZLINK_DONTWAIT) >= 0;
    }

    /// <summary>
    /// Drops a connection that cannot take more output (ZLINK_STREAM_DROP): what the socket holds for it
    /// and has not started writing is discarded, and a ws/wss peer gets a close frame with
    /// <paramref name="closeCode"/> (reason "slow consumer") and a FIN, not a reset. A library without the
    /// option (a zlink 1.3 build) closes the connection the ordinary way instead.
    /// </summary>
    internal static void RequestDrop(nint socket, uint routingId, ushort closeCode, Engine.NativeFraming framing)
    {
        byte* value = stackalloc byte[6];
        BinaryPrimitives.WriteUInt32BigEndian(new Span<byte>(value, 4), routingId);
        BinaryPrimitives.WriteUInt16BigEndian(new Span<byte>(value + 4, 2), closeCode);
        if (Native.SetOption(socket, ZlinkConstants.ZLINK_STREAM_DROP, value, 6) != 0
            && Native.Errno() == (int)ZlinkError.EINVAL)
        {
            RequestClose(socket, routingId, framing);
        }
    }

    /// <summary>Asks the socket to close a connection; a failure means it is gone already.</summary>
    internal static void RequestClose(nint socket, uint routingId, Engine.NativeFraming framing)
    {
        if (SendRoutingId(socket, routingId))
        {
            byte close = 0;
            _ = Native.Send(socket, &close, framing == Engine.NativeFraming.Length ? 1u : 0u, ZlinkConstants.ZLINK_DONTWAIT);
        }
    }
}
