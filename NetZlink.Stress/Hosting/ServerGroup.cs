// --role both's echo servers: one child (the default), or --server-processes M children, server i
// on --port + i, so that no server process holds more connections than it may open files for and
// no server address and port needs more local ports than the kernel's ephemeral range gives one
// source address. Each child's resident set is read when it is ready and at the end: the growth is
// the servers' memory for the run's connections (server_kb_per_conn).
using System.Globalization;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Hosting;

/// <summary>The running echo server children of one run.</summary>
internal sealed class ServerGroup : IAsyncDisposable
{
    private readonly List<ServerChildProcess> _servers = [];
    private readonly List<long> _residentWhenReady = [];

    private ServerGroup()
    {
    }

    /// <summary>The ports the servers bound, in order.</summary>
    public IReadOnlyList<int> Ports => _servers.Select(s => s.Port).ToArray();

    /// <summary>Starts <paramref name="count"/> servers with <paramref name="settings"/>' server flags, server i on Port + i, each having printed READY.</summary>
    /// <exception cref="StressHostException">A server could not start (the others are stopped).</exception>
    public static async Task<ServerGroup> StartAsync(ScenarioSettings settings, int count, bool quiet, TextWriter stderr, CancellationToken cancellationToken)
    {
        if (settings.Port + count - 1 > 65535)
        {
            throw new StressHostException(string.Create(CultureInfo.InvariantCulture,
                $"--server-processes {count} puts its servers on ports {settings.Port}..{settings.Port + count - 1}, beyond 65535: lower --port"));
        }

        var group = new ServerGroup();
        try
        {
            for (int i = 0; i < count; i++)
            {
                ServerChildProcess server = await ServerChildProcess
                    .StartAsync(settings with { Port = settings.Port + i }, quiet, stderr, cancellationToken, count > 1 ? i : null).ConfigureAwait(false);
                group._servers.Add(server);
                group._residentWhenReady.Add(ProcessStats.ResidentBytes(server.ProcessId));
            }

            return group;
        }
        catch
        {
            await group.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>The client's settings: Host:Port of the one server, or every server in Servers.</summary>
    public ScenarioSettings ClientSettings(ScenarioSettings settings)
    {
        string host = PlanRunner.ClientHostFor(settings.BindHost);
        if (_servers.Count == 1)
        {
            return settings with { Host = host, Port = _servers[0].Port };
        }

        string bracketed = host.Contains(':', StringComparison.Ordinal) ? $"[{host}]" : host;
        return settings with
        {
            Host = host,
            Port = _servers[0].Port,
            Servers = _servers.Select(s => string.Create(CultureInfo.InvariantCulture, $"{bracketed}:{s.Port}")).ToArray(),
        };
    }

    /// <summary>How much the servers' resident sets grew from ready to their peak (VmHWM), summed; read before they stop.</summary>
    public long ResidentGrowthBytes() =>
        _servers.Select((s, i) => Math.Max(0, ProcessStats.PeakResidentBytes(s.ProcessId) - _residentWhenReady[i])).Sum();

    /// <summary>
    /// Every stopped server's receive-to-send times in one histogram (servers that printed none, or
    /// a malformed line, warned about, are left out); null when none printed any.
    /// </summary>
    public Output.ServerTimeLine? ServerTimes(TextWriter warnings) =>
        Output.ServerTimeLine.Combine(_servers.Select(s => s.ServerTimes(warnings)).OfType<Output.ServerTimeLine>().ToArray());

    /// <summary>Stops every server (see <see cref="ServerChildProcess.DisposeAsync"/>), all at once.</summary>
    public async ValueTask DisposeAsync() =>
        await Task.WhenAll(_servers.Select(s => s.DisposeAsync().AsTask())).ConfigureAwait(false);
}
