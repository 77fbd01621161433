// The stacks `compare` runs side by side: the two .NET stacks of NetZlink.Stress and the C limit
// rows, limit_echo on its two I/O layers.

namespace NetZlink.Stress.Scenarios;

/// <summary>Names for --stacks.</summary>
internal static class CompareStacks
{
    /// <summary>native/bench/limit_echo.c --io epoll: plain level-triggered epoll, one thread per side, no library.</summary>
    public const string CEpoll = "c-epoll";

    /// <summary>native/bench/limit_echo.c --io uring: io_uring completions (multishot recv, batched sends), one thread per side.</summary>
    public const string CUring = "c-uring";

    /// <summary>The stack every ratio is taken against (the original reports compared with plain .NET).</summary>
    public const string Baseline = StackNames.Dotnet;

    /// <summary>Every stack, in report order.</summary>
    public static readonly IReadOnlyList<string> All = [StackNames.Netzlink, StackNames.Dotnet, CEpoll, CUring];

    /// <summary>Whether <paramref name="stack"/> runs through NetZlink.Stress itself (the others are limit_echo).</summary>
    public static bool IsDotnetProcess(string stack) => stack is not (CEpoll or CUring);

    /// <summary>limit_echo's --io for a limit stack: epoll or uring.</summary>
    public static string LimitIo(string stack) => stack == CUring ? "uring" : "epoll";

    /// <summary>The limit stack of limit_echo's io= (a COUNTS line without one is epoll's).</summary>
    public static string OfLimitIo(string? io) => io == "uring" ? CUring : CEpoll;
}
