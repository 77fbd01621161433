// Random seed values and iteration counts of the randomized tests. Every run prints its seed, so a failure
// can be replayed exactly: NETZLINK_FUZZ_SEED=<seed> runs the same inputs again, and
// NETZLINK_FUZZ_ITERATIONS=<n> runs longer than the default (kept small for the test command).
using System.Globalization;

namespace NetZlink.Tests;

internal static class Fuzz
{
    public const string SeedVariable = "NETZLINK_FUZZ_SEED";
    public const string IterationsVariable = "NETZLINK_FUZZ_ITERATIONS";

    /// <summary>A generator seeded from NETZLINK_FUZZ_SEED or at random; the seed is printed with the test's output.</summary>
    public static Random Random(out int seed)
    {
        string? fixedSeed = Environment.GetEnvironmentVariable(SeedVariable);
        seed = string.IsNullOrEmpty(fixedSeed)
            ? System.Random.Shared.Next()
            : int.Parse(fixedSeed, NumberStyles.Integer, CultureInfo.InvariantCulture);
        TestContext.Out.WriteLine($"{TestContext.CurrentContext.Test.Name}: seed {seed} (repeat with {SeedVariable}={seed})");
        return new Random(seed);
    }

    /// <summary>NETZLINK_FUZZ_ITERATIONS when set (and positive), else <paramref name="byDefault"/>.</summary>
    public static int Iterations(int byDefault)
    {
        string? text = Environment.GetEnvironmentVariable(IterationsVariable);
        if (string.IsNullOrEmpty(text))
        {
            return byDefault;
        }

        if (!int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out int iterations) || iterations < 1)
        {
            throw new ArgumentException($"{IterationsVariable}={text} is not a positive integer.");
        }

        return iterations;
    }

    /// <summary>Random bytes of the given length.</summary>
    public static byte[] Bytes(Random random, int length)
    {
        byte[] bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }
}
