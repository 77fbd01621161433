// The command-line flags (docs/stress-tool.md), bound by CommandLineParser.
// Defaults repeat ScenarioSettings' so that --help can show them; a test checks they agree.
using CommandLine;

namespace NetZlink.Stress.Cli;

/// <summary>The raw flags; <see cref="CommandLineParsing"/> turns them into a <see cref="StressInvocation"/>.</summary>
internal sealed class StressOptions
{
    [Option("scenario", Default = "s2",
        HelpText = "s0 one echo (one connection, one packet, every byte checked: --ccu --inflight --warmup --measure --latency-sample-rate are refused), s1 connect only, s2 throughput, s3 sweeps of s2, s4 s0-s2 over every transport.")]
    public string Scenario { get; set; } = "s2";

    [Option("role", Default = "both",
        HelpText = "both (server in a child process + client), server (echo server until Ctrl+C or SIGTERM) or client.")]
    public string Role { get; set; } = "both";

    [Option("stack", Default = "netzlink",
        HelpText = "Both ends' stack: netzlink (NetZlink's sharded engine, zlink STREAM echo server) or dotnet (System.Net.Sockets, SslStream and System.Net.WebSockets; ignores --hwm and --io-threads). stack= in the output names it, or client+server when the ends differ.")]
    public string Stack { get; set; } = "netzlink";

    [Option("client-stack", HelpText = "The client's stack, netzlink or dotnet (default: --stack).")]
    public string? ClientStack { get; set; }

    [Option("server-stack", HelpText = "The echo server's stack, netzlink or dotnet (default: --stack); with --role client it only labels stack=.")]
    public string? ServerStack { get; set; }

    [Option("transport", Default = "tcp", HelpText = "tcp, tls, ws or wss (those the native library lacks are SKIPped).")]
    public string Transport { get; set; } = "tcp";

    [Option("tls-cert", HelpText = "tls: the echo server's PEM certificate (chain) file. --role both without it makes a CA and a server certificate for each tls run and removes them after.")]
    public string? TlsCert { get; set; }

    [Option("tls-key", HelpText = "tls: the PEM private key of --tls-cert (default: in the --tls-cert file).")]
    public string? TlsKey { get; set; }

    [Option("tls-ca", HelpText = "tls: the PEM CA file the client verifies the server's certificate against (verification is always on).")]
    public string? TlsCa { get; set; }

    [Option("bind-host", Default = "127.0.0.1", HelpText = "Address the echo server binds.")]
    public string BindHost { get; set; } = "127.0.0.1";

    [Option("host", Default = "127.0.0.1", HelpText = "Echo server the client connects to (role client).")]
    public string Host { get; set; } = "127.0.0.1";

    [Option("port", Default = 27110, HelpText = "Server port, 1..65535 (0..65535 with --role server: 0 = any free port).")]
    public int Port { get; set; } = 27110;

    [Option("ccu", Default = 10000, HelpText = "Concurrent connections, 1..1000000.")]
    public int Ccu { get; set; } = 10000;

    [Option("size", Default = 1024, HelpText = "Packet body bytes, 9..16777212 (phase byte + 8-byte timestamp at least; with the 4-byte header at most the engine's 16 MiB packet).")]
    public int Size { get; set; } = 1024;

    [Option("inflight", Default = 30, HelpText = "Packets outstanding per connection, 1..1000000.")]
    public int Inflight { get; set; } = 30;

    [Option("warmup", Default = 3.0, HelpText = "Unmeasured seconds before the measured phase, 0..604800.")]
    public double Warmup { get; set; } = 3;

    [Option("measure", Default = 10.0, HelpText = "Measured seconds: 0 (no measured phase) or 0.1..604800.")]
    public double Measure { get; set; } = 10;

    [Option("drain-timeout", Default = 10.0, HelpText = "Seconds to wait for outstanding packets after sending stops, 0..3600.")]
    public double DrainTimeout { get; set; } = 10;

    [Option("start-at",
        HelpText = "Client roles, s0/s2: connect, then wait until this wall-clock time (Unix seconds, e.g. $(( $(date +%s) + 30 ))) to begin the warm-up, so several client hosts measure together. Already past: start at once with a warning; more than 10 minutes past or 24 hours ahead: an error.")]
    public double? StartAt { get; set; }

    [Option("connect-concurrency", Default = 256, HelpText = "Connection attempts in flight at once, 1..1000000.")]
    public int ConnectConcurrency { get; set; } = 256;

    [Option("connect-timeout", Default = 10.0, HelpText = "Seconds to wait for one connection attempt, 0.001..3600.")]
    public double ConnectTimeout { get; set; } = 10;

    [Option("connect-retries", Default = 3, HelpText = "Retries after a failed or timed-out connection attempt, 0..100 (none after an error a retry cannot change, e.g. EINVAL or EOPNOTSUPP, on the netzlink stack).")]
    public int ConnectRetries { get; set; } = 3;

    [Option("connect-retry-delay-ms", Default = 100, HelpText = "Milliseconds between connection retries, 0..60000.")]
    public int ConnectRetryDelayMs { get; set; } = 100;

    [Option("backlog", Default = 32768, HelpText = "Server listen backlog, 1..2147483647 (the kernel caps it at net.core.somaxconn).")]
    public int Backlog { get; set; } = 32768;

    [Option("hwm", Default = 1000000, HelpText = "Send/receive high-water mark in messages, 0..2147483647 (0 = no limit; netzlink only).")]
    public int Hwm { get; set; } = 1000000;

    [Option("sndbuf", Default = 262144, HelpText = "SO_SNDBUF bytes, 0..2147483647 (0 = the system default).")]
    public int SendBuffer { get; set; } = 262144;

    [Option("rcvbuf", Default = 262144, HelpText = "SO_RCVBUF bytes, 0..2147483647 (0 = the system default).")]
    public int ReceiveBuffer { get; set; } = 262144;

    [Option("io-threads", Default = 1, HelpText = "zlink context I/O threads, 1..256 (netzlink only; the dotnet stack uses the runtime's socket engine threads).")]
    public int IoThreads { get; set; } = 1;

    [Option("shards", Default = 0, HelpText = "Client shards, each with its own thread and share of the connections, 0..1024 (0 = one per core).")]
    public int Shards { get; set; }

    [Option("send-batch", Default = 30, HelpText = "Packets per frame at most, 1..1024 (--send-batch x (--size + 4) bytes must fit one array).")]
    public int SendBatch { get; set; } = 30;

    [Option("rate", Default = 0.0,
        HelpText = "s2 open model: packets per second over all connections, each sent at its due time and timed from it (--inflight stays a cap per connection): 0 (closed loop) or 0.001..1000000000.")]
    public double Rate { get; set; }

    [Option("latency-sample-rate", Default = 16, HelpText = "Time every n-th measured packet, 0..1000000 (0 = no latency).")]
    public int LatencySampleRate { get; set; } = 16;

    [Option("processes", Default = 1,
        HelpText = "Client processes, 1..256 (role both or client, s1/s2): the client fans out into this many `--role client` children, each with its share of --ccu, all starting their warm-up at one --start-at, their results merged as `merge` does. For more connections than one process may open files for.")]
    public int Processes { get; set; } = 1;

    [Option("server-processes", Default = 1,
        HelpText = "Echo server processes, 1..256 (role both): each its own child on --port + i, the client's connections spread over them round-robin. For more connections than one server process may hold, or than one server port leaves local ports for.")]
    public int ServerProcesses { get; set; } = 1;

    [Option("servers",
        HelpText = "Role client: the echo servers as host:port,host:port,... (instead of --host/--port); connection k goes to server k mod count, counted over every shard's connections.")]
    public string? Servers { get; set; }

    [Option("shard-count",
        HelpText = "Role client: this process is one of this many client processes sharing --ccu (1..100000); each runs --ccu / count connections, the remainder spread over the first ones.")]
    public int? ShardCount { get; set; }

    [Option("shard-index",
        HelpText = "Role client with --shard-count: which share this process runs, 0..count-1; unset: the environment variable JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pod index).")]
    public int? ShardIndex { get; set; }

    [Option("start-on-stdin", Hidden = true,
        HelpText = "Role client, s2 (what --processes gives its children): once connected, print CONNECTED on stdout and read the start time (Unix seconds) from stdin, then wait for it as for --start-at.")]
    public bool StartOnStdin { get; set; }

    [Option("scenario-id", HelpText = "Id written in METRIC/CSV/JSON (default <stack>-<scenario>, e.g. dotnet-s2).")]
    public string? ScenarioId { get; set; }

    [Option("metrics-csv", HelpText = "Append one CSV row per run to this file (header when new).")]
    public string? MetricsCsv { get; set; }

    [Option("summary-json", HelpText = "Write the run (or, for s3/s4, an array of runs) as JSON to this file.")]
    public string? SummaryJson { get; set; }

    [Option("json-histogram",
        HelpText = "Also write the raw latency histogram and what `merge` needs into --summary-json, so the results of several client hosts can be merged exactly.")]
    public bool JsonHistogram { get; set; }

    [Option("timeseries-csv", HelpText = "Write the client's per-second progress to this CSV (elapsed,phase,sent_per_s,recv_per_s,inflight,rss_mb,gc_heap_mb).")]
    public string? TimeseriesCsv { get; set; }

    [Option("fault", Default = "none",
        HelpText = "Server misbehaviour (role server/both): none, silent (never answers), garbage (bad length header), wrong-length (header = size+1), close-mid-packet (half a packet, then FIN), slow (4 KB reads, 1 ms pauses), crash (SIGKILL itself --fault-after s after the first connection), stall (hold each connection's first packet --fault-after s, then echo).")]
    public string Fault { get; set; } = "none";

    [Option("fault-every", Default = 1,
        HelpText = "The fault hits accepted connections 0, K, 2K, … (1 = all), 1..1000000; the others are echoed normally.")]
    public int FaultEvery { get; set; } = 1;

    [Option("fault-after", Default = 2.0, HelpText = "--fault crash: seconds from the first connection to the server's SIGKILL; --fault stall: seconds of the stall; 0..3600.")]
    public double FaultAfter { get; set; } = 2;

    [Option("exit-on-stdin-eof",
        HelpText = "--role server: also stop (exit code 0) when stdin reaches end of file; --role client: take the end of stdin as SIGTERM. For a parent that starts the tool as its child with stdin a pipe it holds, so the child never outlives it (the server child of --role both and compare, scripts/echo-server-lib.sh, the client children of --processes). Without it stdin is never read and the server runs until Ctrl+C or SIGTERM, also under nohup, systemd or a container without -i.")]
    public bool ExitOnStdinEof { get; set; }

    [Option("quiet", HelpText = "No progress lines on stderr.")]
    public bool Quiet { get; set; }

    /// <summary>Words that are not flags; any is an error.</summary>
    [Value(0, Hidden = true)]
    public IEnumerable<string> Extra { get; set; } = [];
}
