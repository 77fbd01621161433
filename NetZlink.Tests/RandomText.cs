// Random strings for the bad-input tests: any UTF-16 content (ASCII, control characters and NUL,
// other scripts, characters outside the BMP as surrogate pairs, and unpaired surrogates, which
// have no UTF-8 form), or only text that can reach the native library unchanged.
namespace NetZlink.Tests;

internal static class RandomText
{
    /// <summary>Any UTF-16 string of <paramref name="length"/> code units or so.</summary>
    public static string Any(Random random, int length) => Make(random, length, valid: false);

    /// <summary>Text without NUL or unpaired surrogates.</summary>
    public static string Valid(Random random, int length) => Make(random, length, valid: true);

    /// <summary>The string as error messages show it (escaped, shortened).</summary>
    public static string Describe(string text) => $"\"{Utf8Z.Printable(text)}\" ({text.Length} chars)";

    private static string Make(Random random, int length, bool valid)
    {
        var text = new System.Text.StringBuilder(length + 1);
        while (text.Length < length)
        {
            switch (random.Next(valid ? 4 : 6))
            {
                case 0:
                    text.Append((char)random.Next(0x20, 0x7F));
                    break;
                case 1:
                    text.Append((char)random.Next(0xA0, 0xD800));
                    break;
                case 2:
                    text.Append(char.ConvertFromUtf32(random.Next(0x10000, 0x110000)));
                    break;
                case 3:
                    text.Append((char)random.Next(1, 0x20));
                    break;
                case 4:
                    text.Append('\0');
                    break;
                default:
                    text.Append((char)random.Next(0xD800, 0xE000));
                    break;
            }
        }

        return text.ToString();
    }
}
