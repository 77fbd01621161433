// The outcome of one client run. Which of these are output fields, and how, is Output/ResultSchema.
using HdrHistogram;
using NetZlink.Stress.Latency;

namespace NetZlink.Stress.Scenarios;

/// <summary>What a scenario measured and whether it passed.</summary>
public sealed class ScenarioResult
{
    private string? _stack;

    public required ScenarioSettings Settings { get; set; }
    /// <summary>stack=: the settings' stack label ("netzlink", "dotnet", or "client+server" when the ends differ) unless set.</summary>
    public string Stack { get => _stack ?? Settings.StackLabel; set => _stack = value; }
    public long ConnectSuccess { get; set; }
    public long ConnectFail { get; set; }
    public long ConnectTimeout { get; set; }
    public long Sent { get; set; }
    public long Recv { get; set; }
    public double IncompleteRatio => Sent == 0 ? 0 : (double)(Sent - Recv) / Sent;
    public double Throughput { get; set; }
    public double P50Us { get; set; }
    public double P95Us { get; set; }
    public double P99Us { get; set; }
    public double P999Us { get; set; }
    public double MaxUs { get; set; }
    public double MeanUs { get; set; }
    public double StdevUs { get; set; }
    public long LatencySamples { get; set; }
    public int DrainTimeout { get; set; }
    public long GatingViolation { get; set; }
    /// <summary>errno → count, for errors_by_errno.</summary>
    public SortedDictionary<int, long> ErrorsByErrno { get; } = new();

    /// <summary>Replaces <see cref="ErrorsByErrno"/> with <paramref name="counts"/>.</summary>
    public void SetErrorsByErrno(IEnumerable<KeyValuePair<int, long>> counts)
    {
        ErrorsByErrno.Clear();
        foreach ((int errno, long count) in counts)
        {
            ErrorsByErrno[errno] = count;
        }
    }

    /// <summary>PASS, FAIL or SKIP.</summary>
    public string PassFail { get; set; } = "FAIL";
    /// <summary>Why it failed or was skipped; null on PASS.</summary>
    public string? Reason { get; set; }
    public bool Interrupted { get; set; }
    /// <summary>Why the client stack stopped before the run ended (its context was terminated, a shard failed); null when it did not.</summary>
    public string? ClientFault { get; set; }

    /// <summary>Why a connect failed, when the client stack can say more than its errno (a TLS handshake's reason); added to the connect failure's reason.</summary>
    public string? ConnectFailureDetail { get; set; }
    public double CpuSeconds { get; set; }
    public long PeakRssBytes { get; set; }
    /// <summary>Managed bytes the packet-path threads allocated during the measured phase.</summary>
    public long AllocatedBytes { get; set; }
    /// <summary><see cref="AllocatedBytes"/> divided by packets moved (sent + recv); 0 when none moved.</summary>
    public double AllocatedBytesPerPacket => Sent + Recv == 0 ? 0 : (double)AllocatedBytes / (Sent + Recv);
    public int ShardCount { get; set; }
    /// <summary>hosts=: client processes whose counts this result holds (1 for a run, the sum for a merge).</summary>
    public int Hosts { get; set; } = 1;
    /// <summary>When the measured phase began (Unix seconds, wall clock), so a merge can tell whether the hosts' phases overlapped; null when none began.</summary>
    public double? MeasureStartedAt { get; set; }
    /// <summary>Echoes whose length or bytes differed from what was sent (each closes its connection).</summary>
    public long BadEchoes { get; set; }
    /// <summary>disconnects=: established connections the server closed or reset before the run ended.</summary>
    public long Disconnects { get; set; }
    /// <summary>protocol_errors=: connections closed because an echo's length header was not the packet's.</summary>
    public long ProtocolErrors { get; set; }
    /// <summary>lost=: packets sent (any phase) and never echoed whole: outstanding on a connection when it ended, or at the end of the run.</summary>
    public long Lost { get; set; }
    /// <summary>late=: open model (--rate): measured packets sent after the inflight cap or a full send queue held them past their due time.</summary>
    public long Late { get; set; }
    /// <summary>connect_s=: seconds from starting the client stack until every connection was up or had finally failed.</summary>
    public double ConnectSeconds { get; set; }
    /// <summary>connect_rate=: connections established per second of the connect phase; 0 when it took no time.</summary>
    public double ConnectRate => ConnectSeconds > 0 ? ConnectSuccess / ConnectSeconds : 0;
    /// <summary>Growth of the client processes' resident set, from before the stack started to the run's peak (VmHWM), summed over processes.</summary>
    public long ClientRssGrowthBytes { get; set; }
    /// <summary>The same for the echo server processes this run started (0 when it started none, so measured none).</summary>
    public long ServerRssGrowthBytes { get; set; }
    /// <summary>client_kb_per_conn=: <see cref="ClientRssGrowthBytes"/> in KiB per established connection.</summary>
    public double ClientKbPerConnection => ConnectSuccess == 0 ? 0 : ClientRssGrowthBytes / 1024.0 / ConnectSuccess;
    /// <summary>server_kb_per_conn=: <see cref="ServerRssGrowthBytes"/> in KiB per established connection; 0 when not measured.</summary>
    public double ServerKbPerConnection => ConnectSuccess == 0 ? 0 : ServerRssGrowthBytes / 1024.0 / ConnectSuccess;
    /// <summary>fail_reason=: the first cause of a FAIL, one of <see cref="FailReasons"/>.</summary>
    public string FailReason { get; set; } = FailReasons.None;
    /// <summary>startup_to_connected_ms=: from this process's start (<see cref="Platform.ProcessStart"/>) to its first connection up; 0 when none came up.</summary>
    public double StartupToConnectedMs { get; set; }
    /// <summary>startup_to_first_echo_ms=: from this process's start to its first echo (warm-up or measured); 0 when none came back.</summary>
    public double StartupToFirstEchoMs { get; set; }
    /// <summary>first_n=: echoes timed among the first <see cref="ColdStartProbe.FirstEchoCount"/> of the run (warm-up or measured).</summary>
    public long FirstN { get; set; }
    /// <summary>first_n_p50_us=: the median round trip of those first echoes; 0 when none.</summary>
    public double FirstNP50Us { get; set; }
    /// <summary>first_n_max_us=: the longest round trip among those first echoes; 0 when none.</summary>
    public double FirstNMaxUs { get; set; }
    /// <summary>server_samples=: reads the echo server timed (its SERVER_TIME line); 0 when no server reported (--role client, a fault server).</summary>
    public long ServerTimeSamples { get; set; }
    /// <summary>server_p50_us=: the echo server's median receive-to-send time per read.</summary>
    public double ServerP50Us { get; set; }
    /// <summary>server_p99_us=: its 99th percentile.</summary>
    public double ServerP99Us { get; set; }
    /// <summary>server_max_us=: its longest.</summary>
    public double ServerMaxUs { get; set; }
    /// <summary>The merged latency histogram (ns) of the sampled measured packets.</summary>
    public HistogramBase? Latency { get; set; }

    /// <summary>Sets <see cref="Latency"/> and every latency field from it (a run's merged shards, or a merge's hosts).</summary>
    public void SetLatency(HistogramBase histogram)
    {
        ArgumentNullException.ThrowIfNull(histogram);
        Latency = histogram;
        LatencySamples = histogram.TotalCount;
        P50Us = LatencyHistograms.PercentileUs(histogram, 50);
        P95Us = LatencyHistograms.PercentileUs(histogram, 95);
        P99Us = LatencyHistograms.PercentileUs(histogram, 99);
        P999Us = LatencyHistograms.PercentileUs(histogram, 99.9);
        MaxUs = LatencyHistograms.MaxUs(histogram);
        MeanUs = LatencyHistograms.MeanUs(histogram);
        StdevUs = LatencyHistograms.StdevUs(histogram);
    }
}
