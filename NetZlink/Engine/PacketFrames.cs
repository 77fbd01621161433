// Frames for the default framer's connections, checked the way the native STREAM framing takes
// them: one or more whole [u32 big-endian body length][body] packets, every body at least one
// byte (BATCH refuses anything else with EINVAL and LENGTH cannot carry an empty body). On the
// LENGTH fallback a one-byte body 0x00 cannot be sent either: zlink reads that payload as "close".
using System.Buffers.Binary;

namespace NetZlink.Engine;

internal static class PacketFrames
{
    /// <summary>Null when <paramref name="frame"/> is whole packets the native framing can send; else what is wrong with it.</summary>
    /// <param name="frame">The frame (not empty).</param>
    /// <param name="zeroByteBodyRefused">True on the LENGTH fallback, where a body that is the single byte 0x00 would close the connection.</param>
    internal static string? Problem(ReadOnlySpan<byte> frame, bool zeroByteBodyRefused)
    {
        int offset = 0;
        int packet = 0;
        while (offset < frame.Length)
        {
            int left = frame.Length - offset;
            if (left < LengthPrefixFramer.Size)
            {
                return Describe(frame, $"it ends with {Plural.Of(left, "byte")} after packet {packet}, less than a header");
            }

            uint body = BinaryPrimitives.ReadUInt32BigEndian(frame[offset..]);
            if (body == 0)
            {
                return Describe(frame, $"packet {packet} (at byte {offset}) has an empty body");
            }

            if (body > (uint)(left - LengthPrefixFramer.Size))
            {
                return Describe(frame, $"packet {packet} (at byte {offset}) announces a body of {Plural.Of(body, "byte")}, and {left - LengthPrefixFramer.Size} follow");
            }

            if (zeroByteBodyRefused && body == 1 && frame[offset + LengthPrefixFramer.Size] == 0)
            {
                return Describe(frame, $"packet {packet} (at byte {offset}) is the one-byte body 0x00, which this native library (zlink 1.3 framing) takes as a request to close the connection");
            }

            offset += LengthPrefixFramer.Size + (int)body;
            packet++;
        }

        return null;
    }

    private static string Describe(ReadOnlySpan<byte> frame, string problem) =>
        $"A frame of {Plural.Of(frame.Length, "byte")} is not whole packets of the engine's framing ([u32 big-endian body length][body], bodies of at least one byte): {problem}.";
}
