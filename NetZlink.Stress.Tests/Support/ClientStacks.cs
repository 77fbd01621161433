// The two client stacks a run test runs on ([EachClientStack]: one test case each), and what each
// needs before it starts: the netzlink client needs a library with a STREAM client (NativeNeeds);
// the dotnet client needs nothing.
namespace NetZlink.Stress.Tests.Support;

internal static class ClientStacks
{
    /// <summary>netzlink, then dotnet.</summary>
    public static readonly string[] Both = [StackNames.Netzlink, StackNames.Dotnet];

    /// <summary>Reports the test Ignored, with the reason, when <paramref name="stack"/> is netzlink and the library has no STREAM client.</summary>
    public static void Require(string stack)
    {
        if (stack == StackNames.Netzlink)
        {
            NativeNeeds.RequireStreamClient();
        }
    }
}

/// <summary>One test case per client stack (the test's first argument): netzlink, then dotnet.</summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = false)]
internal sealed class EachClientStackAttribute : TestCaseSourceAttribute
{
    public EachClientStackAttribute()
        : base(typeof(ClientStacks), nameof(ClientStacks.Both))
    {
    }
}
