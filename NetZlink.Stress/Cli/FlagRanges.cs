// Every numeric flag's range, in one place. Each bound is one the rest of the program handles:
//   - --size: the engine's default largest packet (16 MiB, EngineOptions.MaxPacketSize) minus the
//     4-byte length header, so that size + 4 and the buffers built from it stay in int;
//   - durations: far below what TimeSpan, Task.Delay (49.7 days) and the Stopwatch tick
//     arithmetic (seconds x 1e9 in a long) can hold, and small enough that compare's client
//     deadline, (retries + 1) x (timeout + delay) x ccu / concurrency, fits a TimeSpan;
//   - counts: what fits an int where the program adds or multiplies them, and a process's
//     descriptors (about a million) for connections.
// The products of several flags that size one buffer are checked in OptionsValidator.
using NetZlink.Engine;

namespace NetZlink.Stress.Cli;

/// <summary>The documented range of each numeric flag.</summary>
internal static class FlagRanges
{
    /// <summary>The largest --size: the engine's default MaxPacketSize less the length header.</summary>
    public static readonly int MaxSize = new EngineOptions().MaxPacketSize - LengthPrefixFramer.Size;

    /// <summary>The largest array the runtime allocates: a per-thread buffer must fit one.</summary>
    public static readonly long MaxBuffer = Array.MaxLength;

    public static readonly FlagRange Port = new("--port", 1, 65535);

    public static readonly FlagRange ServerPort = new("--port", 0, 65535, Why: "0 = any free port");

    public static readonly FlagRange Ccu = new("--ccu", 1, 1_000_000, Why: "one descriptor each; a process gets about a million");

    public static readonly FlagRange Size = new("--size", 9, MaxSize, "bytes",
        "the body holds the phase byte and an 8-byte timestamp, and with its 4-byte header is at most the engine's 16 MiB packet");

    public static readonly FlagRange Inflight = new("--inflight", 1, 1_000_000);

    public static readonly FlagRange Warmup = new("--warmup", 0, 604_800, "seconds");

    public static readonly FlagRange Measure = new("--measure", 0.1, 604_800, "seconds",
        "a rate needs a measured phase of at least 0.1 s") { ZeroMeans = "no measured phase" };

    public static readonly FlagRange DrainTimeout = new("--drain-timeout", 0, 3600, "seconds");

    public static readonly FlagRange ConnectConcurrency = new("--connect-concurrency", 1, 1_000_000);

    public static readonly FlagRange ConnectTimeout = new("--connect-timeout", 0.001, 3600, "seconds");

    public static readonly FlagRange ConnectRetries = new("--connect-retries", 0, 100);

    public static readonly FlagRange ConnectRetryDelayMs = new("--connect-retry-delay-ms", 0, 60_000);

    public static readonly FlagRange Backlog = new("--backlog", 1, int.MaxValue, Why: "the kernel caps it at net.core.somaxconn");

    public static readonly FlagRange Hwm = new("--hwm", 0, int.MaxValue, Why: "0 = no limit");

    public static readonly FlagRange SendBuffer = new("--sndbuf", 0, int.MaxValue, Why: "0 = the system default; the kernel caps it at net.core.wmem_max");

    public static readonly FlagRange ReceiveBuffer = new("--rcvbuf", 0, int.MaxValue, Why: "0 = the system default; the kernel caps it at net.core.rmem_max");

    public static readonly FlagRange IoThreads = new("--io-threads", 1, 256);

    public static readonly FlagRange Shards = new("--shards", 0, 1024, Why: "0 = one per core");

    public static readonly FlagRange SendBatch = new("--send-batch", 1, 1024);

    public static readonly FlagRange LatencySampleRate = new("--latency-sample-rate", 0, 1_000_000, Why: "0 = no latency");

    public static readonly FlagRange Rate = new("--rate", 0.001, 1e9, "packets per second") { ZeroMeans = "closed loop" };

    public static readonly FlagRange FaultEvery = new("--fault-every", 1, 1_000_000, Why: "1 = every connection");

    public static readonly FlagRange FaultAfter = new("--fault-after", 0, 3600, "seconds");

    public static readonly FlagRange Processes = new("--processes", 1, 256);

    public static readonly FlagRange ServerProcesses = new("--server-processes", 1, 256);

    public static readonly FlagRange ShardCount = new("--shard-count", 1, 100_000);

    /// <summary>Every range; --port appears once, with its client range.</summary>
    public static readonly IReadOnlyList<FlagRange> All =
    [
        Port, Ccu, Size, Inflight, Warmup, Measure, DrainTimeout, ConnectConcurrency, ConnectTimeout, ConnectRetries,
        ConnectRetryDelayMs, Backlog, Hwm, SendBuffer, ReceiveBuffer, IoThreads, Shards, SendBatch, LatencySampleRate,
        Rate, FaultEvery, FaultAfter, Processes, ServerProcesses, ShardCount,
    ];

    /// <summary>The range of <paramref name="flag"/> ("--ccu"), or null for a flag without one.</summary>
    public static FlagRange? For(string flag) => All.FirstOrDefault(r => r.Flag == flag);
}
