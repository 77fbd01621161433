// How a shard's STREAM socket frames its connections (ZLINK_STREAM_FRAMING, chosen when the
// socket is made; see docs/engine.md, "The native framing"):
//   - Batch: the default framer (LengthPrefixFramer) on NetZlink's library. The library cuts the
//     packets: each payload is one or more whole [u32 BE length][body] packets, headers included,
//     handed to OnPacket in place; a frame to send is one payload of whole packets.
//   - Length: the default framer on a library without BATCH (a real zlink 1.3). Each payload is one
//     body; the shard puts the header back in front of it. Each packet of a frame is sent as its
//     own [id][body] message.
//   - Raw: any other framer (and RawStreamFramer): bytes as they arrive, cut by PacketReassembler
//     (or handed on as they are); connection events are zero-length payloads.
namespace NetZlink.Engine;

internal enum NativeFraming
{
    Batch,
    Length,
    Raw,
}
