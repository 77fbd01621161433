// The lines child processes print for their parent: a tag, then space-separated name=value pairs
// whose values never hold a space (limit_echo's COUNTS line, the servers' SERVER_TIME line).
namespace NetZlink.Stress.Output;

/// <summary>Splits a "TAG name=value …" line.</summary>
internal static class NameValueLine
{
    /// <summary>The pairs of <paramref name="line"/>, which must start with <paramref name="tag"/>.</summary>
    /// <param name="invalid">Makes the exception for a problem (the line is not one, a word is not a pair, a name repeats).</param>
    public static Dictionary<string, string> Pairs(string line, string tag, Func<string, Exception> invalid)
    {
        ArgumentNullException.ThrowIfNull(line);
        ArgumentNullException.ThrowIfNull(invalid);
        string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (words.Length == 0 || words[0] != tag)
        {
            throw invalid($"not a {tag} line: \"{Shorten(line)}\"");
        }

        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string word in words.Skip(1))
        {
            int equals = word.IndexOf('=', StringComparison.Ordinal);
            if (equals <= 0 || !values.TryAdd(word[..equals], word[(equals + 1)..]))
            {
                throw invalid($"\"{Shorten(word)}\" is not a name=value pair of its own");
            }
        }

        return values;
    }

    /// <summary>The last line among <paramref name="lines"/> that starts with <paramref name="tag"/> and a space, or null.</summary>
    public static string? Find(IEnumerable<string> lines, string tag) =>
        lines.LastOrDefault(l => l.StartsWith(tag + " ", StringComparison.Ordinal));

    private static string Shorten(string text) => text.Length <= 80 ? text : text[..80] + "…";
}
