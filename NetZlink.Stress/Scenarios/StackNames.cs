// The two stacks the tool can run each end on: NetZlink's sharded engine over zlink STREAM
// sockets, and plain System.Net.Sockets (DotnetStack/). Both speak the same wire format.
namespace NetZlink.Stress.Scenarios;

/// <summary>Names for --stack, --client-stack and --server-stack.</summary>
internal static class StackNames
{
    /// <summary>NetZlink's engine (client) and STREAM echo server.</summary>
    public const string Netzlink = "netzlink";

    /// <summary>System.Net.Sockets client and echo server (NetZlink.Stress.DotnetStack).</summary>
    public const string Dotnet = "dotnet";

    /// <summary>Every stack name, in the order help lists them.</summary>
    public static readonly IReadOnlyList<string> All = [Netzlink, Dotnet];

    /// <summary>The stack= value: the stack when both ends run it, else "client+server".</summary>
    public static string Label(string clientStack, string serverStack) =>
        string.Equals(clientStack, serverStack, StringComparison.Ordinal) ? clientStack : $"{clientStack}+{serverStack}";
}
