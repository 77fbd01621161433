// The engine's three receive paths for one packet format ([u32 BE body length][body]), chosen by
// name in test cases:
//   - "batch": the default framer, which rides the library's BATCH framing;
//   - "length": the default framer on the LENGTH fallback a zlink 1.3 library forces (one body per
//     payload, no ZLINK_STREAM_EVENT), made to run on NetZlink's library;
//   - "custom": the same format through a framer of the test's own, so RAW framing and the
//     managed PacketReassembler cut the packets.
namespace NetZlink.Tests.Engine;

internal static class EngineFramings
{
    public static readonly string[] All = ["batch", "length", "custom"];

    /// <summary>Sets <paramref name="options"/> up for <paramref name="framing"/>; returns them.</summary>
    public static EngineOptions Apply(EngineOptions options, string framing)
    {
        switch (framing)
        {
            case "batch":
                break;
            case "length":
                options.ForceLengthFraming = true;
                break;
            case "custom":
                options.Framer = new U32Framer();
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(framing), framing, "batch, length or custom");
        }

        return options;
    }

    /// <summary>[u32 BE body length][body], like LengthPrefixFramer, but a framer of its own: the engine cuts it in managed code.</summary>
    internal sealed class U32Framer : IPacketFramer
    {
        public int HeaderSize => 4;

        public int GetPacketLength(ReadOnlySpan<byte> header)
        {
            uint body = BinaryPrimitives.ReadUInt32BigEndian(header);
            return body > int.MaxValue - 4 ? -1 : (int)body + 4;
        }
    }
}
