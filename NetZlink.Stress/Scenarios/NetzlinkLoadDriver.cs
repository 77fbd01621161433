// The netzlink client stack behind ILoadDriver: NetZlink's sharded ClientEngine, one
// EchoLoadHandler per shard thread. Sums the handlers' plain counters with Volatile.Read.
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Tls;
using NetZlink.Engine;

namespace NetZlink.Stress.Scenarios;

/// <summary>Runs a <see cref="LoadPlan"/> on a <see cref="ClientEngine"/>.</summary>
internal sealed class NetzlinkLoadDriver : ILoadDriver
{
    private readonly ClientEngine _engine;
    private readonly EchoLoadHandler[] _handlers;

    private NetzlinkLoadDriver(ClientEngine engine, EchoLoadHandler[] handlers)
    {
        _engine = engine;
        _handlers = handlers;
    }

    public int ShardCount => _engine.ShardCount;

    public Task ConnectsResolved => _engine.ConnectsResolved;

    public Exception? Fault => _engine.Fault;

    public bool Stopped => _engine.Stopped.IsCompleted;

    /// <summary>Creates the engine for <paramref name="ccu"/> connections to Host:Port and starts connecting.</summary>
    /// <param name="context">The context the engine runs on (the caller keeps and disposes it); null: the engine's own.</param>
    public static NetzlinkLoadDriver Start(ScenarioSettings settings, int ccu, LoadPlan plan, ZlinkContext? context = null)
    {
        var options = new EngineOptions
        {
            Endpoints = Endpoints(settings),
            Tls = TlsEngineSettings.Client(settings),
            ShardCount = settings.Shards,
            ConnectConcurrency = settings.ConnectConcurrency,
            ConnectTimeout = TimeSpan.FromSeconds(settings.ConnectTimeoutSeconds),
            ConnectRetries = settings.ConnectRetries,
            ConnectRetryDelay = TimeSpan.FromMilliseconds(settings.ConnectRetryDelayMs),
            HighWaterMark = settings.Hwm,
            SendBufferSize = settings.SendBuffer,
            ReceiveBufferSize = settings.ReceiveBuffer,
            SendScratchSize = Math.Max(256 * 1024, settings.SendBatch * (settings.Size + 4)),
            MaxPacketSize = settings.Size + 4,
            Framer = new LengthPrefixFramer(maxBody: settings.Size, minBody: settings.Size),
            RaiseDescriptorLimit = true,
        };

        var engine = new ClientEngine(ccu, options, context);
        try
        {
            var handlers = new EchoLoadHandler[engine.ShardCount];
            engine.Start(shard => handlers[shard.Index] = new EchoLoadHandler(shard, plan, engine.ShardCount));
            plan.PhaseChanged = engine.RequestPass;
            return new NetzlinkLoadDriver(engine, handlers);
        }
        catch
        {
            engine.Dispose();
            throw;
        }
    }

    public LoadTotals Totals()
    {
        var sum = new LoadTotalsSum();
        foreach (EchoLoadHandler h in _handlers)
        {
            h.AddTotals(ref sum);
        }

        return sum.ToTotals();
    }

    public bool HaveAllObserved(LoadPhase phase) => _handlers.All(h => Volatile.Read(ref h.ObservedPhase) == (int)phase);

    public double P99UsEstimate()
    {
        double p99 = 0;
        foreach (EchoLoadHandler handler in _handlers)
        {
            // Read while the shard records: an estimate for the progress line, never for the result.
            p99 = Math.Max(p99, LatencyHistograms.PercentileUsWhileRecording(handler.Histogram, 99));
        }

        return p99;
    }

    public HistogramBase MergedLatency() => LatencyHistograms.Merge(_handlers.Select(h => h.Histogram));

    public IReadOnlyDictionary<int, long> ErrorsByErrno() => _engine.ErrorsByErrno();

    public string? ConnectFailureDetail() => _handlers.Select(h => Volatile.Read(ref h.LastTlsFailure)).FirstOrDefault(d => d is not null);

    public long AllocatedDuringMeasure() => _handlers.Sum(h => Volatile.Read(ref h.AllocatedDuringMeasure));

    public void Stop(TimeSpan timeout) => _engine.Stop(timeout);

    public void Dispose() => _engine.Dispose();

    /// <summary>
    /// Host:Port, or the --servers list turned so that this process's connection j, the
    /// (ServerOffset + j)-th of all client processes', goes to server (ServerOffset + j) mod count.
    /// </summary>
    internal static string[] Endpoints(ScenarioSettings settings)
    {
        if (settings.Servers.Count == 0)
        {
            return [$"{settings.Transport}://{FormatHost(settings.Host)}:{settings.Port}"];
        }

        int count = settings.Servers.Count;
        return Enumerable.Range(0, count).Select(j => $"{settings.Transport}://" + settings.Servers[(settings.ServerOffset + j) % count]).ToArray();
    }

    private static string FormatHost(string host)
        => host.Contains(':', StringComparison.Ordinal) && !host.StartsWith('[') ? $"[{host}]" : host;
}
