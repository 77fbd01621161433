// The stacks `compare` runs side by side: the two .NET stacks of NetZlink.Stress and the C limit row.
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>Names for --stacks.</summary>
internal static class CompareStacks
{
    /// <summary>native/bench/limit_echo.c: plain epoll, one thread per side, no library.</summary>
    public const string CEpoll = "c-epoll";

    /// <summary>The stack every ratio is taken against (the original reports compared with plain .NET).</summary>
    public const string Baseline = StackNames.Dotnet;

    /// <summary>Every stack, in report order.</summary>
    public static readonly IReadOnlyList<string> All = [StackNames.Netzlink, StackNames.Dotnet, CEpoll];

    /// <summary>Whether <paramref name="stack"/> runs through NetZlink.Stress itself.</summary>
    public static bool IsDotnetProcess(string stack) => stack != CEpoll;
}
