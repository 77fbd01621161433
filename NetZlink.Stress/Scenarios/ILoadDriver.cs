// The seam between the scenario runner (phases, waiting, judging) and a client stack that moves
// the packets. Each stack starts connecting when it is created, follows LoadPlan.Phase on its own
// threads, and answers these questions without locks on its packet path.
using HdrHistogram;

namespace NetZlink.Stress.Scenarios;

/// <summary>A running client: netzlink's engine (<see cref="NetzlinkLoadDriver"/>) or the plain .NET one.</summary>
internal interface ILoadDriver : IDisposable
{
    /// <summary>Shards the connections are spread over.</summary>
    int ShardCount { get; }

    /// <summary>Completes once every connection has connected or failed for good.</summary>
    Task ConnectsResolved { get; }

    /// <summary>The exception that stopped the stack, if any.</summary>
    Exception? Fault { get; }

    /// <summary>True once the stack has stopped (nothing will observe further phases).</summary>
    bool Stopped { get; }

    /// <summary>The counters now; each read without locks while the stack runs.</summary>
    LoadTotals Totals();

    /// <summary>Whether every shard has seen <paramref name="phase"/> (Done: counters are final).</summary>
    bool HaveAllObserved(LoadPhase phase);

    /// <summary>A p99 (µs) for the progress line; an estimate while recording goes on.</summary>
    double P99UsEstimate();

    /// <summary>The sampled round trips of measured packets, merged; call after Done was observed.</summary>
    HistogramBase MergedLatency();

    /// <summary>errno → count of failed connect attempts and other socket errors.</summary>
    IReadOnlyDictionary<int, long> ErrorsByErrno();

    /// <summary>What the stack knows of a connect failure beyond its errno (the TLS reason of a refused certificate), or null.</summary>
    string? ConnectFailureDetail() => null;

    /// <summary>Managed bytes the packet-path threads allocated during the measured phase.</summary>
    long AllocatedDuringMeasure();

    /// <summary>Closes every connection and stops the stack's threads, waiting up to <paramref name="timeout"/>.</summary>
    void Stop(TimeSpan timeout);
}
