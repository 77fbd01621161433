// The parameters of one scenario run, as the CLI parsed them. Names follow the CLI's flags.
namespace NetZlink.Stress.Scenarios;

/// <summary>Everything a client or server run needs; defaults are the reference profile (docs/scenarios.md).</summary>
public sealed record ScenarioSettings
{
    /// <summary>s0, s1 or s2.</summary>
    public string Scenario { get; init; } = "s2";
    /// <summary>Free-form id written in METRIC/CSV/JSON; defaults to "&lt;stack&gt;-&lt;scenario&gt;".</summary>
    public string? ScenarioId { get; init; }
    /// <summary>tcp, tls, ws or wss: the scheme of the endpoints both ends use.</summary>
    public string Transport { get; init; } = "tcp";
    /// <summary>--tls-cert: the echo server's PEM certificate for tls (--role both makes one per run when it is not given).</summary>
    public string? TlsCertificateFile { get; init; }
    /// <summary>--tls-key: the PEM private key of <see cref="TlsCertificateFile"/>; null: in the certificate's file.</summary>
    public string? TlsKeyFile { get; init; }
    /// <summary>--tls-ca: the PEM CA file the client verifies the server's certificate against.</summary>
    public string? TlsCaFile { get; init; }
    public string Host { get; init; } = "127.0.0.1";
    public string BindHost { get; init; } = "127.0.0.1";
    public int Port { get; init; } = 27110;
    public int Ccu { get; init; } = 10000;
    /// <summary>--servers: the echo servers as "host:port" (connection k to server (k + <see cref="ServerOffset"/>) mod count); empty: Host:Port.</summary>
    public IReadOnlyList<string> Servers { get; init; } = [];
    /// <summary>The index of this process's first connection among all client processes' (--shard-index), so that the servers get equal shares.</summary>
    public int ServerOffset { get; init; }
    public int Size { get; init; } = 1024;
    public int Inflight { get; init; } = 30;
    public double WarmupSeconds { get; init; } = 3;
    public double MeasureSeconds { get; init; } = 10;
    public double DrainTimeoutSeconds { get; init; } = 10;
    /// <summary>--start-at: the wall-clock time (Unix seconds) the client waits for after connecting, before the warm-up; null starts at once.</summary>
    public double? StartAt { get; init; }
    public int ConnectConcurrency { get; init; } = 256;
    public double ConnectTimeoutSeconds { get; init; } = 10;
    public int ConnectRetries { get; init; } = 3;
    public int ConnectRetryDelayMs { get; init; } = 100;
    public int Backlog { get; init; } = 32768;
    public int Hwm { get; init; } = 1000000;
    public int SendBuffer { get; init; } = 262144;
    public int ReceiveBuffer { get; init; } = 262144;
    public int IoThreads { get; init; } = 1;
    /// <summary>0 = one per core.</summary>
    public int Shards { get; init; }
    public int SendBatch { get; init; } = 30;
    /// <summary>Every n-th measured packet is timed; 0 disables latency.</summary>
    public int LatencySampleRate { get; init; } = 16;
    /// <summary>s2 open model (--rate): packets per second over all connections, each sent when due; 0 = closed loop.</summary>
    public double Rate { get; init; }
    /// <summary>The client's stack: "netzlink" or "dotnet" (--client-stack, default --stack).</summary>
    public string ClientStack { get; init; } = StackNames.Netzlink;
    /// <summary>The echo server's stack: "netzlink" or "dotnet" (--server-stack, default --stack).</summary>
    public string ServerStack { get; init; } = StackNames.Netzlink;
    /// <summary>The stack= value: the stack when both ends run it, else "client+server".</summary>
    public string StackLabel => StackNames.Label(ClientStack, ServerStack);
    /// <summary>
    /// --start-on-stdin (a --processes child): called once connected, returns the start time (Unix
    /// seconds) to wait for as for --start-at; its parent tells it once every child is connected.
    /// </summary>
    internal Func<CancellationToken, Task<double>>? StartGate { get; init; }
    /// <summary>The server's fault (--fault); None runs the normal echo server.</summary>
    internal Faults.FaultMode Fault { get; init; }
    /// <summary>Every K-th accepted connection (0-based index % K == 0) gets the fault (--fault-every).</summary>
    public int FaultEvery { get; init; } = 1;
    /// <summary>--fault crash: seconds from the first connection to the server's SIGKILL; --fault stall: seconds of the stall (--fault-after).</summary>
    public double FaultAfterSeconds { get; init; } = 2;
}
