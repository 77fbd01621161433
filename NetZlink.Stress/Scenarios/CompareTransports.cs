// The transports compare can run (--transports) and how a run's label carries one: tcp runs keep
// the scenario's own name (s0, s1, s2, s2-open), so a tcp-only compare reads as it always did;
// other transports prefix it ("tls-s2", "ws-s2", "wss-s2"), which makes the row ids <stack>-tls-s2
// and the folders DIR/<stack>/tls-s2. c-epoll and c-uring (limit_echo) speak tcp only, so they have no
// tls, ws or wss runs at all.
namespace NetZlink.Stress.Scenarios;

/// <summary>Names for --transports and the labels of per-transport runs.</summary>
internal static class CompareTransports
{
    /// <summary>The label of s2 run as an open model beside the closed loop (compare --rate).</summary>
    public const string OpenScenario = "s2-open";

    /// <summary>The default and, without --transports, the only one.</summary>
    public const string Tcp = "tcp";

    /// <summary>Every transport compare runs, in report order.</summary>
    public static readonly IReadOnlyList<string> All =
        [Tcp, Tls.TlsEngineSettings.Transport, Tls.TlsEngineSettings.WebSocket, Tls.TlsEngineSettings.SecureWebSocket];

    /// <summary>What the report says when a compare has runs over tls, ws or wss and c-epoll or c-uring is among the stacks.</summary>
    public const string CEpollTcpOnlyNote =
        "c-epoll and c-uring (limit_echo) speak plain tcp only: they have no rows over tls, ws or wss (SKIP: limit_echo has no TLS and no WebSocket), and ratios to them there are n/a. Over tls and wss both .NET stacks verify the server against a CA made for the run.";

    /// <summary>The run label of <paramref name="scenario"/> over <paramref name="transport"/>: the scenario itself on tcp, "transport-scenario" otherwise.</summary>
    public static string Label(string transport, string scenario) => transport == Tcp ? scenario : $"{transport}-{scenario}";

    /// <summary>The transport and scenario of a run label.</summary>
    public static (string Transport, string Scenario) Split(string label)
    {
        foreach (string transport in All)
        {
            if (transport != Tcp && label.StartsWith(transport + "-", StringComparison.Ordinal))
            {
                return (transport, label[(transport.Length + 1)..]);
            }
        }

        return (Tcp, label);
    }

    /// <summary>Whether <paramref name="stack"/> has a run labelled <paramref name="label"/> (c-epoll, c-uring: tcp ones only).</summary>
    public static bool Runs(string stack, string label) => CompareStacks.IsDotnetProcess(stack) || Split(label).Transport == Tcp;
}
