// Counts in messages: "1 byte", "2 bytes", "0 frames".
namespace NetZlink;

internal static class Plural
{
    /// <summary><paramref name="count"/> and <paramref name="noun"/>, with an "s" unless the count is one.</summary>
    internal static string Of(long count, string noun) => count == 1 ? $"1 {noun}" : $"{count} {noun}s";
}
