// The fast pass: --quick stands for BenchmarkDotNet's own "--job short" (3 warm-ups, 3
// iterations, one launch), so a whole-suite run fits in a few minutes on a small machine.
namespace NetZlink.Benchmarks;

internal static class QuickSwitch
{
    internal const string Flag = "--quick";

    /// <summary>The arguments with every --quick replaced by --job short.</summary>
    internal static string[] Expand(string[] args)
    {
        var expanded = new List<string>(args.Length + 1);
        foreach (string arg in args)
        {
            if (arg == Flag)
            {
                expanded.Add("--job");
                expanded.Add("short");
            }
            else
            {
                expanded.Add(arg);
            }
        }

        return [.. expanded];
    }
}
