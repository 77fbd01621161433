// Encodes a string as NUL-terminated UTF-8 for the char* parameters of the ABI (endpoints,
// metadata keys, capability names): into the caller's stack buffer when it fits, else into a
// new array. None of these calls is on a per-message path.
//
// Two kinds of string cannot make that trip unchanged, and the library would act on something
// other than what the caller wrote: a NUL character ends the C string early (Bind("inproc://a\0b")
// would bind "inproc://a"), and an unpaired UTF-16 surrogate has no UTF-8 form (the encoder would
// put U+FFFD in its place, so two different names could reach the library as one). Callers ask
// Problem() first and refuse such strings with an error that says why.
using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace NetZlink.Interop;

internal static class Utf8Z
{
    /// <summary>Size of the stack buffer callers pass; longer strings get an array.</summary>
    internal const int StackLimit = 256;

    /// <summary>Why <paramref name="value"/> cannot be passed as C text unchanged, or null when it can.</summary>
    internal static string? Problem(string value) => Problem(value, allowNul: false);

    /// <summary>As <see cref="Problem(string)"/>; with <paramref name="allowNul"/>, for byte values where a NUL is data.</summary>
    internal static string? Problem(string value, bool allowNul)
    {
        for (int i = 0; i < value.Length; i++)
        {
            char c = value[i];
            if (c == '\0' && !allowNul)
            {
                return $"a NUL character at index {i}, where the native library would end the text";
            }

            if (char.IsHighSurrogate(c) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]))
            {
                i++;
            }
            else if (char.IsSurrogate(c))
            {
                return string.Create(CultureInfo.InvariantCulture, $"an unpaired surrogate U+{(int)c:X4} at index {i}, which has no UTF-8 form");
            }
        }

        return null;
    }

    /// <summary>The UTF-8 bytes of a string <see cref="Problem(string)"/> accepted, with a terminating NUL.</summary>
    internal static Span<byte> Encode(string value, Span<byte> scratch)
    {
        Debug.Assert(Problem(value) is null, "callers check the string first");
        int needed = Encoding.UTF8.GetMaxByteCount(value.Length) + 1;
        Span<byte> buffer = needed <= scratch.Length ? scratch : new byte[needed];
        int written = Encoding.UTF8.GetBytes(value, buffer);
        buffer[written] = 0;
        return buffer[..(written + 1)];
    }

    /// <summary>
    /// <paramref name="value"/> as it can be shown in an error message: control characters and
    /// unpaired surrogates as <c>\uXXXX</c> escapes (so a NUL does not cut the message short in a
    /// C log), and a very long value shortened with its length noted.
    /// </summary>
    internal static string Printable(string value)
    {
        const int Shown = 200;
        bool plain = value.Length <= Shown;
        foreach (char c in value)
        {
            plain &= !char.IsControl(c) && !char.IsSurrogate(c);
        }

        if (plain)
        {
            return value;
        }

        int end = Math.Min(value.Length, Shown);
        if (end < value.Length && char.IsHighSurrogate(value[end - 1]))
        {
            end--; // do not cut a surrogate pair in two
        }

        var text = new StringBuilder(end + 40);
        for (int i = 0; i < end; i++)
        {
            char c = value[i];
            bool paired = char.IsHighSurrogate(c) ? i + 1 < value.Length && char.IsLowSurrogate(value[i + 1])
                : char.IsLowSurrogate(c) && i > 0 && char.IsHighSurrogate(value[i - 1]);
            if (char.IsControl(c) || (char.IsSurrogate(c) && !paired))
            {
                text.Append(CultureInfo.InvariantCulture, $"\\u{(int)c:X4}");
            }
            else
            {
                text.Append(c);
            }
        }

        if (value.Length > Shown)
        {
            text.Append(CultureInfo.InvariantCulture, $"…({value.Length} characters)");
        }

        return text.ToString();
    }

    /// <summary>Reads a NUL-terminated UTF-8 string of at most <paramref name="capacity"/> bytes.</summary>
    internal static unsafe string Decode(byte* text, int capacity)
    {
        var bytes = new ReadOnlySpan<byte>(text, capacity);
        int end = bytes.IndexOf((byte)0);
        return Encoding.UTF8.GetString(end < 0 ? bytes : bytes[..end]);
    }
}
