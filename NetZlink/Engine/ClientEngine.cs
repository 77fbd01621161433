// The sharded client engine: a fixed set of shard threads, each owning one STREAM socket and the
// connections assigned to it round-robin (connection i -> shard i % shards, slot i / shards).
// No task, thread or timer per connection: 10,000 connections are 10,000 structs in a few arrays.
using System.Text;
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>
/// Opens many connections to one or more endpoints and drives them from a fixed number of shard
/// threads. Applications plug in an <see cref="IConnectionHandler"/> per shard (callbacks on the
/// shard thread, no locks) or start it with <see cref="StreamEngine.StartChannel"/> to read
/// connection events and packets through a <c>ChannelReader</c>; any thread may send with <see cref="StreamEngine.TrySend"/> or
/// <see cref="StreamEngine.SendAsync"/>.
/// </summary>
public sealed class ClientEngine : StreamEngine
{
    private readonly byte[][] _endpoints;
    private readonly TaskCompletionSource _connectsResolved = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _shardsUnresolved;

    /// <summary>Creates an engine for <paramref name="connectionCount"/> connections; nothing connects before <see cref="Start"/>.</summary>
    /// <param name="connectionCount">Connections to open (at least 1).</param>
    /// <param name="options">Endpoints and tuning; validated here, and every host name in them resolved once.</param>
    /// <param name="context">The context to create sockets in; null makes (and later disposes) one of its own.</param>
    /// <exception cref="ArgumentException">The options are invalid, or a host name in an endpoint does not
    /// resolve to an IPv4 address: "could not resolve host 'name' in endpoint tcp://name:port: reason".</exception>
    /// <exception cref="ZlinkNotSupportedException">An endpoint is tls://, ws:// or wss:// and the native library lacks that
    /// transport; the message names the missing capability (<c>zlink_has("ws")</c> or <c>zlink_has("tls")</c>).</exception>
    /// <exception cref="InvalidOperationException">The process's descriptor limit cannot hold the connections (see <see cref="EngineOptions.RaiseDescriptorLimit"/>).</exception>
    public ClientEngine(int connectionCount, EngineOptions options, ZlinkContext? context = null)
        : this(Checked(connectionCount, options), connectionCount, context)
    {
    }

    // options: the engine's own checked snapshot (EngineOptions.Snapshot), never the caller's object.
    private ClientEngine(EngineOptions options, int connectionCount, ZlinkContext? context)
        : base(
            options,
            context,
            ShardsFor(connectionCount, options),
            (engine, i) => MakeShard(engine, options, connectionCount, i))
    {
        ConnectionCount = connectionCount;
        _endpoints = options.Endpoints.Select(e => Encoding.UTF8.GetBytes(e + "\0")).ToArray();
    }

    /// <summary>Connections this engine opens.</summary>
    public int ConnectionCount { get; }

    /// <summary>
    /// Completes when every connection is established or has finally failed; faults with
    /// <see cref="StreamEngine.Fault"/> when the engine stopped first (a <see cref="ContextTerminatedException"/>
    /// when the context was terminated under the engine).
    /// </summary>
    public Task ConnectsResolved => _connectsResolved.Task;

    /// <summary>
    /// Checks that the native library's STREAM sockets can connect, creates each shard's socket and
    /// handler and starts the shard threads, which begin connecting at once. A failed connect
    /// attempt is retried (<see cref="EngineOptions.ConnectRetries"/>) unless its errno cannot change
    /// on a retry (<see cref="ConnectFailure.Permanent"/>): then the connection fails after that one attempt.
    /// </summary>
    /// <param name="handlerFactory">Called once per shard, on the calling thread, before that shard starts.</param>
    /// <exception cref="ObjectDisposedException">The engine, or the context it was given, was disposed.</exception>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ZlinkNotSupportedException">The loaded native library's STREAM sockets cannot connect
    /// (a zlink 1.3 build's are server-only), or the framer is not the default one and the library has no RAW
    /// STREAM framing; the message names the library file.</exception>
    public void Start(Func<EngineShard, IConnectionHandler> handlerFactory)
    {
        _shardsUnresolved = Shards.Length;
        StartShards("ClientEngine.Start", handlerFactory, StreamConnectProbe.Check, CreateShardSocket, ConnectErrnoMonitor.TryOpen);
    }

    private protected override void StartWithHandlers(Func<EngineShard, IConnectionHandler> handlerFactory) => Start(handlerFactory);

    internal byte[] EndpointUtf8(int connectionIndex) => _endpoints[connectionIndex % _endpoints.Length];

    internal void OnShardConnectsResolved()
    {
        if (Interlocked.Decrement(ref _shardsUnresolved) == 0)
        {
            _connectsResolved.TrySetResult();
        }
    }

    private protected override bool IsConnectionOfThisEngine(Connection connection)
        => connection.Index == (connection.Slot * Shards.Length) + connection.Shard;

    private protected override void OnFault(Exception fault) => _connectsResolved.TrySetException(fault);

    private protected override void OnAllShardsExited() => _connectsResolved.TrySetResult();

    private protected override void ConfigureShardSocket(nint socket, int shard)
    {
        // The engine times out and retries attempts itself; the socket must not retry behind its back.
        SetInt(socket, ZlinkConstants.ZLINK_RECONNECT_IVL, -1, "RECONNECT_IVL");
        SetInt(socket, ZlinkConstants.ZLINK_CONNECT_TIMEOUT, (int)Math.Min(int.MaxValue, Options.ConnectTimeout.TotalMilliseconds), "CONNECT_TIMEOUT");
    }

    private static EngineOptions Checked(int connectionCount, EngineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(connectionCount, 1);
        options = options.Snapshot();
        options.ThrowIfInvalid(server: false);
        EndpointTransports.EnsureSupported(options.Endpoints, "ClientEngine: Connect");
        EndpointHosts.EnsureResolvable(options.Endpoints);
        // Before anything is opened: fail with both numbers when the run cannot fit.
        DescriptorBudget.Ensure(connectionCount, options.ReservedDescriptors + (ShardsFor(connectionCount, options) * 4), options.RaiseDescriptorLimit);
        return options;
    }

    /// <summary>One shard per core (or <see cref="EngineOptions.ShardCount"/>), never more than connections.</summary>
    private static int ShardsFor(int connectionCount, EngineOptions options) => Math.Min(options.EffectiveShardCount, connectionCount);

    /// <summary>Shard <paramref name="shard"/>: connection i goes to shard i % shards, slot i / shards.</summary>
    private static EngineShard MakeShard(StreamEngine engine, EngineOptions options, int connectionCount, int shard)
    {
        int shards = ShardsFor(connectionCount, options);
        return new EngineShard(engine, options, shard, shards, (connectionCount - shard + shards - 1) / shards, accepting: false);
    }
}
