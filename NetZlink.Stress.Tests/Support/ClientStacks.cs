// What a test that runs on both client stacks needs before it starts: the netzlink client needs a
// library with a STREAM client (NativeNeeds); the dotnet client needs nothing.
namespace NetZlink.Stress.Tests.Support;

internal static class ClientStacks
{
    /// <summary>Reports the test Ignored, with the reason, when <paramref name="stack"/> is netzlink and the library has no STREAM client.</summary>
    public static void Require(string stack)
    {
        if (stack == StackNames.Netzlink)
        {
            NativeNeeds.RequireStreamClient();
        }
    }
}
