// Tuning of a ClientEngine: shard count, connect policy, socket options and buffers.
using Microsoft.Extensions.Logging;

namespace NetZlink.Engine;

/// <summary>
/// Settings of a <see cref="ClientEngine"/> or <see cref="ServerEngine"/>. Connect settings apply to
/// the client only; <see cref="MaxConnections"/> and <see cref="Backlog"/> to the server only.
/// </summary>
public sealed class EngineOptions
{
    /// <summary>
    /// Client: endpoints to connect to (<c>tcp://host:port</c>, or <c>tls://</c>, <c>ws://host:port/path</c>,
    /// <c>wss://</c> when the native library has them); connection <c>i</c> uses endpoint
    /// <c>i % Count</c>. Server: endpoints to bind (<c>tcp://127.0.0.1:*</c> picks a port), one shard each.
    /// </summary>
    public IReadOnlyList<string> Endpoints { get; set; } = Array.Empty<string>();

    /// <summary>Number of worker shards (threads). 0 means one per processor core.</summary>
    public int ShardCount { get; set; }

    /// <summary>At most this many connect attempts in flight across the engine.</summary>
    public int ConnectConcurrency { get; set; } = 256;

    /// <summary>How long one connect attempt may take before it counts as timed out.</summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Attempts after the first one that failed or timed out.</summary>
    public int ConnectRetries { get; set; } = 3;

    /// <summary>Pause between a failed attempt and the next one.</summary>
    public TimeSpan ConnectRetryDelay { get; set; } = TimeSpan.FromMilliseconds(100);

    /// <summary>SNDHWM and RCVHWM of each shard's socket (messages per connection).</summary>
    public int HighWaterMark { get; set; } = 1000;

    /// <summary>SO_SNDBUF of each connection; 0 keeps the OS default.</summary>
    public int SendBufferSize { get; set; }

    /// <summary>SO_RCVBUF of each connection; 0 keeps the OS default.</summary>
    public int ReceiveBufferSize { get; set; }

    /// <summary>
    /// The shard's receive buffer: the most a shard takes from one connection at a time. With the
    /// default framer, whole packets up to this many bytes per read (a larger packet is read on its
    /// own into a pooled buffer of its size); with other framers, bytes as they arrived.
    /// </summary>
    public int ReceiveChunkSize { get; set; } = 64 * 1024;

    /// <summary>Size of the scratch buffer a handler builds outgoing frames in (per shard).</summary>
    public int SendScratchSize { get; set; } = 256 * 1024;

    /// <summary>
    /// Largest packet (header included) the framer accepts; a larger one is a protocol error. With the
    /// default framer the native library applies it (MAXMSGSIZE, the largest body): it drops a
    /// connection that announces a longer packet before buffering any of it.
    /// </summary>
    public int MaxPacketSize { get; set; } = 16 * 1024 * 1024;

    /// <summary>
    /// Receive memory per connection: the most bytes of a packet not yet whole that the engine holds
    /// for one connection; default 16 MiB. The engine sets aside only bytes that arrived, never what a
    /// header announces. A connection whose bytes go past it is closed with
    /// <see cref="ConnectionEndReason.ReceiveBudgetExceeded"/> (counted in
    /// <see cref="EngineCounters.ReceiveBudgetExceeded"/>); the engine runs on. With the default framer
    /// the native library holds these bytes, and this budget lowers its MAXMSGSIZE when it is below
    /// <see cref="MaxPacketSize"/>. See docs/engine.md, "Receive memory".
    /// </summary>
    public int ReceiveBudgetPerConnection { get; set; } = 16 * 1024 * 1024;

    /// <summary>
    /// Receive memory per shard: the most bytes of packets not yet whole that one shard holds for all
    /// its connections together; default 256 MiB. The connection whose bytes take the shard past it is
    /// closed with <see cref="ConnectionEndReason.ReceiveBudgetExceeded"/>. At least
    /// <see cref="ReceiveBudgetPerConnection"/>. With the default framer the native library holds these
    /// bytes and applies it (ZLINK_STREAM_RCVBUDGET; a zlink 1.3 library has none). See docs/engine.md, "Receive memory".
    /// </summary>
    public long ReceiveBudgetPerShard { get; set; } = 256L * 1024 * 1024;

    /// <summary>
    /// Bytes of the handler's own frames a connection may hold in its retry queue while its socket
    /// queue is full; a Send that would go beyond it returns Full, but a larger frame is taken when
    /// none of the handler's own is held (no frame is refused for its size: docs/engine.md, "Frame sizes").
    /// </summary>
    public int MaxPendingBytesPerConnection { get; set; } = 4 * 1024 * 1024;

    /// <summary>
    /// Bytes of posted frames (<see cref="StreamEngine.TrySend"/>) one connection may hold before
    /// they reach its socket (queued, or waiting at the high-water mark); beyond it TrySend says no
    /// and SendAsync waits. A larger frame is taken when the connection holds no other posted frame:
    /// no frame is refused for its size (docs/engine.md, "Frame sizes").
    /// </summary>
    public int SendQueueCapacityPerConnection { get; set; } = 4 * 1024 * 1024;

    /// <summary>Bytes of posted frames one shard may hold in all (every connection's together); beyond it TrySend says no (a larger frame is taken when the shard holds no other).</summary>
    public long SendQueueCapacityPerShard { get; set; } = 64L * 1024 * 1024;

    /// <summary>
    /// How packets are cut out of the byte stream. Default: a u32 big-endian body length prefix (the
    /// reference packet, docs/scenarios.md), which the native library cuts itself (BATCH framing; bodies
    /// of at least one byte). Any other framer reads the connections' bytes as they arrive (RAW
    /// framing) and needs NetZlink's library; <see cref="RawStreamFramer"/> hands them on uncut.
    /// See docs/engine.md, "The native framing".
    /// </summary>
    public IPacketFramer Framer { get; set; } = LengthPrefixFramer.Instance;

    /// <summary>Descriptors the process needs besides one per connection (runtime, sockets, pipes).</summary>
    public int ReservedDescriptors { get; set; } = 256;

    /// <summary>
    /// When the process's soft open-file limit (RLIMIT_NOFILE) is too low for the connections, let
    /// the engine raise it up to the hard limit. Off by default: a library does not change process
    /// limits unless asked; without it such an engine fails at construction, naming the numbers.
    /// </summary>
    public bool RaiseDescriptorLimit { get; set; }

    /// <summary>
    /// Server engines: most connections one shard accepts at once; a connection beyond it is closed
    /// at once and counted (<see cref="EngineCounters.ConnectFailed"/>). Default 65,536.
    /// </summary>
    public int MaxConnections { get; set; } = 65_536;

    /// <summary>Server engines: the listen backlog of each bound endpoint. Default 4096.</summary>
    public int Backlog { get; set; } = 4096;

    /// <summary>TLS settings for <c>tls://</c> and <c>wss://</c> endpoints, set on every shard's STREAM socket; null: none.</summary>
    public EngineTlsOptions? Tls { get; set; }

    /// <summary>
    /// Where the engine logs what an operator needs (connect failures with their reasons, faults,
    /// handler exceptions, slow peers and consumers, dropped posts; the event table is in
    /// docs/hosting.md). Events that can repeat per connection or packet are rate limited per
    /// shard. Null (the default): the engine logs nothing. NetZlink.Extensions.Hosting sets the
    /// host's factory.
    /// </summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>
    /// The engine's name in log events and in the <c>netzlink.engine.name</c> attribute of its spans
    /// and metrics; null: the type name (<c>ClientEngine</c>, <c>ServerEngine</c>).
    /// </summary>
    public string? Name { get; set; }

    /// <summary>
    /// The share of messages (posted frames, received packets or runs) that get a span on the
    /// "NetZlink" ActivitySource when someone listens: 0 (the default) none, 1 every one. Connection
    /// spans (connect attempts, accepts, disconnects) do not depend on it.
    /// </summary>
    public double MessageTraceSampleRatio { get; set; }

    /// <summary>
    /// Dead-peer detection: a connection that has received nothing for this long is closed with
    /// <see cref="ConnectionEndReason.IdleTimeout"/> (client and server engines). Checked on the
    /// shard's passes with a coarse clock (no timer per connection), so a connection ends between
    /// this and about a quarter more after its last bytes. <see cref="TimeSpan.Zero"/> (the
    /// default): off. While a channel's reader holds its shard's reading back, the wait does not count.
    /// </summary>
    public TimeSpan IdleTimeout { get; set; }

    /// <summary>
    /// TCP keepalive (SO_KEEPALIVE) on every connection of the engine's STREAM sockets (tcp, tls,
    /// ws and wss all run over TCP): true on, false off, null (the default) the OS default. With
    /// it on, a peer that vanished without a word is found by the kernel, and its connection ends
    /// as <see cref="ConnectionEndReason.Remote"/>.
    /// </summary>
    public bool? TcpKeepalive { get; set; }

    /// <summary>TCP_KEEPIDLE: seconds of silence before the first keepalive probe (with <see cref="TcpKeepalive"/> on); 0 keeps the OS default.</summary>
    public int TcpKeepaliveIdle { get; set; }

    /// <summary>TCP_KEEPINTVL: seconds between keepalive probes (with <see cref="TcpKeepalive"/> on); 0 keeps the OS default.</summary>
    public int TcpKeepaliveInterval { get; set; }

    /// <summary>TCP_KEEPCNT: unanswered probes before the connection is dropped (with <see cref="TcpKeepalive"/> on); 0 keeps the OS default.</summary>
    public int TcpKeepaliveCount { get; set; }

    /// <summary>
    /// Client engines: reconnect a connection that was established and then ended with
    /// <see cref="ConnectionEndReason.Remote"/> or <see cref="ConnectionEndReason.IdleTimeout"/>,
    /// with backoff, jitter, a cap and a give-up (docs/engine.md, "Reconnecting"). Null (the
    /// default): a connection that ended stays ended.
    /// </summary>
    public ReconnectPolicy? Reconnect { get; set; }

    /// <summary>Name prefix of the shard threads.</summary>
    public string ThreadNamePrefix { get; set; } = "netzlink-shard";

    /// <summary>
    /// Tests only: the default framer's sockets frame as on a zlink 1.3 library (LENGTH, without
    /// ZLINK_STREAM_EVENT) even where the library has BATCH, so the fallback runs on NetZlink's library.
    /// </summary>
    internal bool ForceLengthFraming { get; set; }

    internal int EffectiveShardCount => ShardCount > 0 ? ShardCount : Environment.ProcessorCount;

    /// <summary>
    /// Checks every setting against its bounds and returns each problem as (setting, problem), for
    /// example <c>("ConnectRetries", "must be at least 0 (is -1)")</c>; none when the settings are
    /// usable. A setting of a nested object is named with its path (<c>Reconnect:Jitter</c>), as in
    /// configuration. The engines' constructors throw for the first problem; the hosting package
    /// turns every one into a line that names its configuration key.
    /// </summary>
    /// <param name="server">True for a <see cref="ServerEngine"/> (its settings are checked, the connect settings are not); false for a <see cref="ClientEngine"/>.</param>
    public IEnumerable<(string Option, string Problem)> Validate(bool server)
    {
        if (Endpoints is null)
        {
            yield return (nameof(Endpoints), "is null: name at least one endpoint (tcp://, tls://, ws:// or wss://) to connect to (client) or bind (server).");
        }
        else if (Endpoints.Count == 0)
        {
            yield return (nameof(Endpoints), server
                ? "is empty: name at least one endpoint to bind (tcp://127.0.0.1:5555, tcp://*:*, tls://, ws://, wss://)"
                : "is empty: name at least one endpoint to connect to (tcp://host:port, tls://, ws://host:port/path, wss://)");
        }

        int header = Framer?.HeaderSize ?? LengthPrefixFramer.Size;
        if (Framer is null)
        {
            yield return (nameof(Framer), "is null: leave it unset for the default framer (LengthPrefixFramer)");
        }

        foreach ((string option, string problem) in Checks(server, header))
        {
            yield return (option, problem);
        }

        if (Reconnect is { } reconnect)
        {
            foreach ((string option, string problem) in reconnect.Problems(nameof(Reconnect) + ":"))
            {
                yield return (option, problem);
            }
        }
    }

    private IEnumerable<(string Option, string Problem)> Checks(bool server, int header)
    {
        (string, string?)[] checks =
        [
            (nameof(ShardCount), AtLeast(ShardCount, 0, "0 means one per processor core")),
            (nameof(HighWaterMark), AtLeast(HighWaterMark, 0)),
            (nameof(SendBufferSize), AtLeast(SendBufferSize, 0, "0 keeps the OS default")),
            (nameof(ReceiveBufferSize), AtLeast(ReceiveBufferSize, 0, "0 keeps the OS default")),
            (nameof(ReceiveChunkSize), AtLeast(ReceiveChunkSize, 1024)),
            (nameof(SendScratchSize), AtLeast(SendScratchSize, 1024)),
            (nameof(MaxPacketSize), AtLeast(MaxPacketSize, header, "the framer's header size")),
            (nameof(MaxPendingBytesPerConnection), AtLeast(MaxPendingBytesPerConnection, 0)),
            (nameof(SendQueueCapacityPerConnection), AtLeast(SendQueueCapacityPerConnection, 1)),
            (nameof(SendQueueCapacityPerShard), AtLeast(SendQueueCapacityPerShard, 1)),
            (nameof(ReceiveBudgetPerConnection), AtLeast(ReceiveBudgetPerConnection, header + 1, "the framer's header size and one byte")),
            (nameof(ReceiveBudgetPerShard), AtLeast(ReceiveBudgetPerShard, ReceiveBudgetPerConnection, "ReceiveBudgetPerConnection: a shard holds at least one connection's bytes")),
            (nameof(MessageTraceSampleRatio), MessageTraceSampleRatio is >= 0 and <= 1 ? null : $"must be from 0 to 1 (is {Show(MessageTraceSampleRatio)})"),
            (nameof(IdleTimeout), IdleTimeout >= TimeSpan.Zero ? null : $"must not be negative (00:00:00 turns it off) (is {IdleTimeout:c})"),
            (nameof(TcpKeepaliveIdle), AtLeast(TcpKeepaliveIdle, 0, "seconds; 0 keeps the OS default")),
            (nameof(TcpKeepaliveInterval), AtLeast(TcpKeepaliveInterval, 0, "seconds; 0 keeps the OS default")),
            (nameof(TcpKeepaliveCount), AtLeast(TcpKeepaliveCount, 0, "0 keeps the OS default")),
        ];
        foreach ((string option, string? problem) in checks)
        {
            if (problem is not null)
            {
                yield return (option, problem);
            }
        }

        if (server)
        {
            if (MaxConnections is not (>= 1 and <= 1 << 24))
            {
                yield return (nameof(MaxConnections), $"must be from 1 to {1 << 24} (is {Show(MaxConnections)})");
            }

            if (AtLeast(Backlog, 1) is string backlog)
            {
                yield return (nameof(Backlog), backlog);
            }

            yield break;
        }

        if (AtLeast(ConnectConcurrency, 1) is string concurrency)
        {
            yield return (nameof(ConnectConcurrency), concurrency);
        }

        if (ConnectTimeout <= TimeSpan.Zero)
        {
            yield return (nameof(ConnectTimeout), $"must be positive (is {ConnectTimeout:c})");
        }

        if (AtLeast(ConnectRetries, 0) is string retries)
        {
            yield return (nameof(ConnectRetries), retries);
        }

        if (ConnectRetryDelay < TimeSpan.Zero)
        {
            yield return (nameof(ConnectRetryDelay), $"must not be negative (is {ConnectRetryDelay:c})");
        }
    }

    /// <summary>
    /// The engines' own copy, taken before validation: the endpoint list is copied into a new array
    /// and <see cref="Tls"/> and <see cref="Reconnect"/> into new objects, so a caller that changes
    /// these options (or the list it passed as <see cref="Endpoints"/>) after constructing an engine
    /// changes nothing in that engine. The framer and the logger factory are shared, not copied.
    /// </summary>
    internal EngineOptions Snapshot()
    {
        var copy = (EngineOptions)MemberwiseClone();
        copy.Endpoints = Endpoints is null ? null! : [.. Endpoints];
        copy.Tls = Tls?.Copy();
        copy.Reconnect = Reconnect?.Copy();
        return copy;
    }

    /// <summary>Throws for the first problem <see cref="Validate(bool)"/> finds, naming the setting.</summary>
    internal void ThrowIfInvalid(bool server)
    {
        foreach ((string option, string problem) in Validate(server))
        {
            string message = $"EngineOptions.{option} {problem}";
            if (option == nameof(Endpoints) && Endpoints is null)
            {
                throw new ArgumentNullException(option, message);
            }

            if (option == nameof(Endpoints))
            {
                throw new ArgumentException(message, option);
            }

            throw new ArgumentOutOfRangeException(option, message);
        }
    }

    private static string? AtLeast(long value, long least, string? note = null)
        => value >= least ? null : $"must be at least {Show(least)}{(note is null ? string.Empty : $" ({note})")} (is {Show(value)})";

    private static string Show<T>(T value)
        where T : IFormattable => value.ToString(null, System.Globalization.CultureInfo.InvariantCulture);
}
