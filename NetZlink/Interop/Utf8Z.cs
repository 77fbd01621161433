// Encodes a string as NUL-terminated UTF-8 for the char* parameters of the ABI (endpoints,
// metadata keys, capability names): into the caller's stack buffer when it fits, else into a
// new array. None of these calls is on a per-message path.
using System.Text;

namespace NetZlink.Interop;

internal static class Utf8Z
{
    /// <summary>Size of the stack buffer callers pass; longer strings get an array.</summary>
    internal const int StackLimit = 256;

    internal static Span<byte> Encode(string value, Span<byte> scratch)
    {
        int needed = Encoding.UTF8.GetMaxByteCount(value.Length) + 1;
        Span<byte> buffer = needed <= scratch.Length ? scratch : new byte[needed];
        int written = Encoding.UTF8.GetBytes(value, buffer);
        buffer[written] = 0;
        return buffer[..(written + 1)];
    }

    /// <summary>Reads a NUL-terminated UTF-8 string of at most <paramref name="capacity"/> bytes.</summary>
    internal static unsafe string Decode(byte* text, int capacity)
    {
        var bytes = new ReadOnlySpan<byte>(text, capacity);
        int end = bytes.IndexOf((byte)0);
        return Encoding.UTF8.GetString(end < 0 ? bytes : bytes[..end]);
    }
}
