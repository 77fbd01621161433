// The server side of the engine: one shard per bound endpoint, each owning one STREAM socket that
// accepts connections, with the same handler model, send path, retry buffer, posting and fault
// rules as the client engine (they are the same EngineShard).
using System.Text;
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>
/// Accepts many connections on one or more bound endpoints (one shard thread each) and drives
/// them with the same <see cref="IConnectionHandler"/> model as <see cref="ClientEngine"/>: a
/// connection is announced by <see cref="IConnectionHandler.OnConnected"/>, its packets (cut by
/// <see cref="EngineOptions.Framer"/>: the default one by the native library, as soon as each
/// packet's last byte is in; <see cref="RawStreamFramer"/> hands on bytes as they arrive; see
/// docs/engine.md, "The native framing") by <see cref="IConnectionHandler.OnPacket"/>, its end by
/// <see cref="IConnectionHandler.OnDisconnected"/>. Slots are reused: each connection gets a new
/// <see cref="Connection.Index"/>. With the default framer it also runs on a zlink 1.3 library
/// (LENGTH framing); other framers need NetZlink's library (RAW framing).
/// </summary>
/// <example>
/// <code>
/// using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
/// server.Start(_ =&gt; new EchoHandler());   // OnPacket: shard.Send(connection, packet)
/// Console.WriteLine(server.BoundEndpoints[0]);
/// </code>
/// </example>
public sealed class ServerEngine : StreamEngine
{
    private readonly string[] _bound;
    private int _nextConnectionIndex = -1;

    /// <summary>Creates a server for <see cref="EngineOptions.Endpoints"/> (one shard each); nothing is bound before <see cref="Start"/>.</summary>
    /// <param name="options">Endpoints to bind and tuning; validated here.</param>
    /// <param name="context">The context to create sockets in; null makes (and later disposes) one of its own.</param>
    /// <exception cref="ArgumentException">The options are invalid.</exception>
    /// <exception cref="ZlinkNotSupportedException">An endpoint is tls://, ws:// or wss:// and the native library lacks that
    /// transport; the message names the missing capability (<c>zlink_has("ws")</c> or <c>zlink_has("tls")</c>).</exception>
    public ServerEngine(EngineOptions options, ZlinkContext? context = null)
        : this(Checked(options), context, snapshot: true)
    {
    }

    // options: the engine's own checked snapshot (EngineOptions.Snapshot), never the caller's object.
    private ServerEngine(EngineOptions options, ZlinkContext? context, bool snapshot)
        : base(
            options,
            context,
            options.Endpoints.Count,
            (engine, i) => new EngineShard(engine, options, i, options.Endpoints.Count, options.MaxConnections, accepting: true))
    {
        _bound = new string[options.Endpoints.Count];
    }

    /// <summary>The endpoint each shard is bound to, with the port the system chose for <c>:*</c> (after <see cref="Start"/>).</summary>
    public IReadOnlyList<string> BoundEndpoints => _bound;

    /// <summary>Binds each shard's endpoint and starts the shard threads, which accept at once.</summary>
    /// <param name="handlerFactory">Called once per shard, on the calling thread, before that shard starts.</param>
    /// <exception cref="EndpointException">An endpoint cannot be bound (in use, invalid); nothing stays bound.</exception>
    /// <exception cref="ZlinkNotSupportedException">The framer is not the default one and the native library has no RAW
    /// STREAM framing (a zlink 1.3 build); the message names the framer and the library.</exception>
    /// <exception cref="ObjectDisposedException">The engine, or the context it was given, was disposed.</exception>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    public void Start(Func<EngineShard, IConnectionHandler> handlerFactory)
        => StartShards("ServerEngine.Start", handlerFactory, _ => { }, CreateShardSocket, _ => null);

    private protected override void StartWithHandlers(Func<EngineShard, IConnectionHandler> handlerFactory) => Start(handlerFactory);

    internal int NextConnectionIndex() => Interlocked.Increment(ref _nextConnectionIndex) & int.MaxValue;

    private protected override bool IsConnectionOfThisEngine(Connection connection) => connection.Index >= 0;

    private protected override unsafe void ConfigureShardSocket(nint socket, int shard)
    {
        SetInt(socket, ZlinkConstants.ZLINK_BACKLOG, Options.Backlog, "BACKLOG");
        string endpoint = Options.Endpoints[shard];
        byte[] utf8 = Encoding.UTF8.GetBytes(endpoint + "\0");
        fixed (byte* e = utf8)
        {
            if (Native.Bind(socket, e) != 0)
            {
                Ensure.ThrowEndpoint(Native.Errno(), "ServerEngine.Start: Bind", endpoint);
            }
        }

        byte* last = stackalloc byte[256];
        nuint size = 256;
        _bound[shard] = Native.GetOption(socket, ZlinkConstants.ZLINK_LAST_ENDPOINT, last, &size) == 0 && size > 0
            ? Encoding.UTF8.GetString(last, (int)size - 1)
            : endpoint;
    }

    private static EngineOptions Checked(EngineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options = options.Snapshot();
        options.ThrowIfInvalid(server: true);
        EndpointTransports.EnsureSupported(options.Endpoints, "ServerEngine: Bind");
        foreach (string endpoint in options.Endpoints)
        {
            bool secure = endpoint.StartsWith("tls://", StringComparison.Ordinal) || endpoint.StartsWith("wss://", StringComparison.Ordinal);
            if (secure && string.IsNullOrEmpty(options.Tls?.CertificateFile))
            {
                // The native bind would say only EINVAL.
                throw new ArgumentException(
                    $"ServerEngine: the endpoint {endpoint} needs a server certificate: set EngineOptions.Tls.CertificateFile (a PEM certificate chain) and, unless the key is in that file, Tls.KeyFile.",
                    nameof(options));
            }
        }

        if (options.RaiseDescriptorLimit)
        {
            // A server cannot know how many will connect: the most the process may open.
            DescriptorBudget.RaiseSoftLimitToHard();
        }

        return options;
    }
}
