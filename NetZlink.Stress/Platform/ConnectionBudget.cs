// What one machine's limits allow before a single connection is opened: a process may open only so
// many files (ulimit -n; one socket each), and one source address reaches one server address and
// port from the kernel's ephemeral port range only (net.ipv4.ip_local_port_range: 28,232 ports by
// default). A run that cannot fit is refused up front with the numbers and the flag that fixes it,
// instead of failing partway through its connect phase.
using System.Globalization;

namespace NetZlink.Stress.Platform;

/// <summary>Checks a run's connections against the open-file limit and the ephemeral port range.</summary>
internal static class ConnectionBudget
{
    /// <summary>Open files a client or server process keeps for other things than its connections (runtime, shards' sockets, pipes, listeners).</summary>
    public const int ReservedFiles = 512;

    private const string PortRangeFile = "/proc/sys/net/ipv4/ip_local_port_range";

    /// <summary>The processes and server endpoints a run spreads its connections over.</summary>
    /// <param name="Connections">--ccu: every client process's connections together.</param>
    /// <param name="ClientProcesses">Client processes on this machine sharing them.</param>
    /// <param name="ServerProcesses">Echo server processes this run starts on this machine (0: the servers are elsewhere).</param>
    /// <param name="Destinations">Server address and port pairs the connections are spread over.</param>
    /// <param name="ClientFix">The flag that adds client processes ("--processes").</param>
    /// <param name="DestinationFix">What adds server endpoints, with {0} for how many: "use --server-processes {0} or more".</param>
    public sealed record Layout(int Connections, int ClientProcesses, int ServerProcesses, int Destinations, string ClientFix, string DestinationFix);

    /// <summary>The kernel's ephemeral port range, or Linux's default when it cannot be read.</summary>
    public static (int Low, int High) EphemeralPorts()
    {
        try
        {
            string[] parts = File.ReadAllText(PortRangeFile).Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length == 2
                && int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out int low)
                && int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out int high) && high >= low)
            {
                return (low, high);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }

        return (32768, 60999);
    }

    /// <summary>Throws when <paramref name="layout"/> cannot fit this machine's limits.</summary>
    /// <exception cref="InvalidOperationException">One line per limit exceeded, with the numbers and the fix.</exception>
    public static void Ensure(Layout layout)
    {
        (ulong soft, ulong hard) = DescriptorLimit.Get();
        IReadOnlyList<string> problems = Problems(layout, soft, hard, EphemeralPorts());
        if (problems.Count > 0)
        {
            throw new InvalidOperationException(string.Join("; and ", problems));
        }
    }

    /// <summary>Every limit <paramref name="layout"/> exceeds, each a sentence with the numbers and the fix.</summary>
    public static IReadOnlyList<string> Problems(Layout layout, ulong softFiles, ulong hardFiles, (int Low, int High) ports)
    {
        var problems = new List<string>();
        long files = (long)Math.Min(hardFiles, int.MaxValue);
        string limit = string.Create(CultureInfo.InvariantCulture, $"at most {hardFiles} (ulimit -n: soft {softFiles}, hard {hardFiles})");
        int client = Largest(layout.Connections, layout.ClientProcesses);
        if (client + ReservedFiles > files)
        {
            problems.Add(string.Create(CultureInfo.InvariantCulture,
                $"{client} connections need {client + ReservedFiles} open files in one client process ({client} sockets + {ReservedFiles} reserved), but a process here may open {limit}; {Spread(layout.Connections, files, layout.ClientFix)}"));
        }

        if (layout.ServerProcesses > 0)
        {
            int server = Largest(layout.Connections, layout.ServerProcesses);
            if (server + ReservedFiles > files)
            {
                problems.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{server} connections need {server + ReservedFiles} open files in one echo server process ({server} sockets + {ReservedFiles} reserved), but a process here may open {limit}; {Spread(layout.Connections, files, "--server-processes")}"));
            }
        }

        int portCount = ports.High - ports.Low + 1;
        int perDestination = Largest(layout.Connections, Math.Max(1, layout.Destinations));
        if (perDestination > portCount)
        {
            int needed = Largest(layout.Connections, portCount);
            problems.Add(string.Create(CultureInfo.InvariantCulture,
                $"{perDestination} connections from one source address to one server address and port need {perDestination} local ports, but the ephemeral port range {ports.Low}-{ports.High} (net.ipv4.ip_local_port_range) gives {portCount} per (source, destination) pair; {string.Format(CultureInfo.InvariantCulture, layout.DestinationFix, needed)} ({Largest(layout.Connections, needed)} connections each)"));
        }

        return problems;
    }

    /// <summary>What one of <paramref name="count"/> processes or servers holds at most.</summary>
    private static int Largest(int total, int count) => (total + count - 1) / count;

    private static string Spread(int connections, long files, string flag)
    {
        long room = files - ReservedFiles;
        if (room < 1)
        {
            return "raise the hard limit (ulimit -Hn, LimitNOFILE=)";
        }

        int needed = (int)Math.Min(int.MaxValue, (connections + room - 1) / room);
        return string.Create(CultureInfo.InvariantCulture,
            $"use {flag} {needed} or more ({Largest(connections, needed)} connections each), or raise the hard limit");
    }
}
