// The dotnet stack's client: `ccu` System.Net.Sockets connections spread over `--shards` shards
// (default one per core), driven by SocketAsyncEventArgs completions on the runtime's socket
// engine threads plus one thread per shard for connects and phase changes. It follows the same
// LoadPlan as the netzlink client and reports through the same ILoadDriver, so the runner's
// phases and pass rules are the ones both stacks share.
//
// --hwm and --io-threads have no meaning here: the kernel's socket buffers (--sndbuf/--rcvbuf)
// are the only queues, and the runtime sizes its own socket engine.
using System.Net;
using HdrHistogram;
using NetZlink.Stress.Latency;
using NetZlink.Engine;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

/// <summary>Runs a <see cref="LoadPlan"/> over plain .NET sockets.</summary>
internal sealed class DotnetClient : ILoadDriver
{
    private readonly DotnetClientShard[] _shards;
    private readonly List<ClientThreadState> _threads = [];
    private readonly ErrnoCounts _errors = new();
    private readonly TaskCompletionSource _resolved = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _shardsUnresolved;
    private Exception? _fault;
    private int _stopped;
    private volatile bool _disposed;

    private DotnetClient(ScenarioSettings settings, int ccu, LoadPlan plan, IPEndPoint endpoint)
    {
        Plan = plan;
        int shardCount = Math.Clamp(settings.Shards > 0 ? settings.Shards : Environment.ProcessorCount, 1, ccu);
        int attemptLimit = (settings.ConnectConcurrency + shardCount - 1) / shardCount;
        _shards = new DotnetClientShard[shardCount];
        for (int i = 0; i < shardCount; i++)
        {
            int connections = (ccu / shardCount) + (i < ccu % shardCount ? 1 : 0);
            _shards[i] = new DotnetClientShard(this, i, shardCount, connections, settings, plan, endpoint, attemptLimit);
        }

        _shardsUnresolved = shardCount;
    }

    public LoadPlan Plan { get; }

    public int ShardCount => _shards.Length;

    public Task ConnectsResolved => _resolved.Task;

    public Exception? Fault => Volatile.Read(ref _fault);

    public bool Stopped => Volatile.Read(ref _stopped) != 0;

    /// <summary>True once disposed: threads drop their per-thread state for it.</summary>
    public bool IsDisposed => _disposed;

    /// <summary>
    /// Checks the descriptor budget, resolves Host:Port and starts every shard connecting.
    /// </summary>
    /// <exception cref="InvalidOperationException">The process may not open <paramref name="ccu"/> more sockets.</exception>
    /// <exception cref="ArgumentException">--host is neither an address nor a name that resolves.</exception>
    public static DotnetClient Start(ScenarioSettings settings, int ccu, LoadPlan plan)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(ccu, 1);
        Platform.DescriptorLimit.Ensure(ccu, reserved: 64);
        IPEndPoint endpoint = EndpointResolver.ForClient(settings.Host, settings.Port);
        var client = new DotnetClient(settings, ccu, plan, endpoint);
        foreach (DotnetClientShard shard in client._shards)
        {
            shard.Start();
        }

        plan.PhaseChanged = client.WakeShards;
        return client;
    }

    private void WakeShards()
    {
        foreach (DotnetClientShard shard in _shards)
        {
            shard.Wake();
        }
    }

    public LoadTotals Totals()
    {
        var sum = new LoadTotalsSum();
        foreach (DotnetClientShard shard in _shards)
        {
            shard.AddTotals(ref sum);
        }

        return sum.ToTotals();
    }

    public bool HaveAllObserved(LoadPhase phase) => _shards.All(s => s.ObservedPhase == phase);

    public double P99UsEstimate()
    {
        double p99 = 0;
        foreach (ClientThreadState state in Threads())
        {
            using (state.Gate.EnterScope())
            {
                p99 = Math.Max(p99, LatencyHistograms.PercentileUs(state.Histogram, 99));
            }
        }

        return p99;
    }

    public HistogramBase MergedLatency()
    {
        // Each thread's gate waits out a callback in progress; later ones see Done and record nothing.
        LongHistogram merged = LatencyHistograms.Create();
        foreach (ClientThreadState state in Threads())
        {
            using (state.Gate.EnterScope())
            {
                merged.Add(state.Histogram);
            }
        }

        return merged;
    }

    public IReadOnlyDictionary<int, long> ErrorsByErrno() => _errors.Snapshot();

    public long AllocatedDuringMeasure()
    {
        long total = 0;
        foreach (ClientThreadState state in Threads())
        {
            using (state.Gate.EnterScope())
            {
                total += state.AllocatedDuringMeasure;
            }
        }

        return total;
    }

    public void Stop(TimeSpan timeout)
    {
        if (Interlocked.Exchange(ref _stopped, 1) != 0)
        {
            return;
        }

        DateTime deadline = DateTime.UtcNow + timeout;
        foreach (DotnetClientShard shard in _shards)
        {
            TimeSpan left = deadline - DateTime.UtcNow;
            shard.Stop(left > TimeSpan.Zero ? left : TimeSpan.Zero);
        }

        _resolved.TrySetResult();
    }

    public void Dispose()
    {
        Stop(TimeSpan.FromSeconds(10));
        foreach (DotnetClientShard shard in _shards)
        {
            if (shard.ThreadExited)
            {
                shard.Dispose();
            }
        }

        _disposed = true;
    }

    /// <summary>A thread's first callback for this client registers its state here.</summary>
    internal void Register(ClientThreadState state)
    {
        lock (_threads)
        {
            _threads.Add(state);
        }
    }

    internal void CountError(int errno)
        => _errors.Add(errno);

    internal void ReportFault(Exception e) => Interlocked.CompareExchange(ref _fault, e, null);

    internal void OnShardResolved()
    {
        if (Interlocked.Decrement(ref _shardsUnresolved) == 0)
        {
            _resolved.TrySetResult();
        }
    }

    private ClientThreadState[] Threads()
    {
        lock (_threads)
        {
            return [.. _threads];
        }
    }
}
