// The built-in echo server: a ServerEngine with one shard (one thread, the shape of the C limit
// row too) that returns every packet a connection sends to that connection, in order, whole: the
// engine's default framer ([u32 BE body length][body], the stress tool's packet), which the native
// library cuts (BATCH framing; LENGTH on a real zlink 1.3), so a packet is echoed as soon as its
// last byte is in, however the client split its writes. A payload the socket refuses at its
// high-water mark waits in the engine's retry buffer for that connection and goes out first, so
// order holds; a connection whose unsent echo passes MaxBacklogBytes is closed as a slow consumer
// (counted) rather than letting server memory grow without bound. That bound is real only if the
// socket refuses in time: its high-water mark counts messages, and each echo is one message of up
// to ReceiveChunk bytes (a read's packets), so the server's mark is at most
// MaxBacklogBytes / ReceiveChunk (32) whatever --hwm says (--hwm 0 removes it, as documented).
// A connection that stops reading thus holds at most 8 MiB in the socket's queue and 8 MiB in the
// retry buffer (with packets up to 256 KiB; a larger packet is one message of its own size) before
// it is closed. Before, the default --hwm of 1,000,000 messages let 500 MiB pushed by a client that
// did not read grow the server from 80 to 588 MB. A header that announces an
// empty body or more than 16 MiB ends that connection as a protocol error. Every n-th packet of a
// connection is timed from the handler's call (just after the engine's read) to the echo handed
// back to the engine (ServerTimes).
using NetZlink.Engine;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Tls;

namespace NetZlink.Stress.Scenarios;

/// <summary>A STREAM echo server on its own thread, built on the library's <see cref="ServerEngine"/>.</summary>
public sealed class EchoServer : EchoServerBase
{
    private const int MaxBacklogBytes = 8 * 1024 * 1024;

    /// <summary>The engine's receive buffer, and so the largest echo of a read's packets (one message).</summary>
    private const int ReceiveChunk = 256 * 1024;

    /// <summary>The most messages the server's socket queues per connection: <see cref="MaxBacklogBytes"/> of echoes.</summary>
    internal const int MaxQueuedMessages = MaxBacklogBytes / ReceiveChunk;

    private ServerEngine? _engine;
    private long _connections;
    private long _bytesEchoed;
    private long _slowConsumersClosed;

    /// <summary>Creates the server; nothing is bound until <see cref="EchoServerBase.Start"/>.</summary>
    public EchoServer(ScenarioSettings settings)
        : base(settings)
    {
    }

    /// <summary>Connections currently open.</summary>
    public override long Connections => Interlocked.Read(ref _connections);

    /// <summary>Bytes echoed so far (handed to the socket, or held for it in order).</summary>
    public long BytesEchoed => Interlocked.Read(ref _bytesEchoed);

    /// <summary>Connections closed because their unsent echo passed the backlog limit.</summary>
    public long SlowConsumersClosed => Interlocked.Read(ref _slowConsumersClosed);

    /// <summary>The exception the serving thread died of, if any.</summary>
    public override Exception? Fault => _engine?.Fault;

    /// <summary>Binds and starts serving; throws an EndpointException (e.g. EADDRINUSE) when it cannot bind.</summary>
    protected override int Bind()
    {
        string host = Settings.BindHost.Contains(':', StringComparison.Ordinal) && !Settings.BindHost.StartsWith('[') ? $"[{Settings.BindHost}]" : Settings.BindHost;
        string port = Settings.Port == 0 ? "*" : Settings.Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        var engine = new ServerEngine(new EngineOptions
        {
            Endpoints = [$"{Settings.Transport}://{host}:{port}"],
            Tls = TlsEngineSettings.Server(Settings),
            Framer = LengthPrefixFramer.Instance,
            Backlog = Settings.Backlog,
            HighWaterMark = Settings.Hwm == 0 ? 0 : Math.Min(Settings.Hwm, MaxQueuedMessages),
            SendBufferSize = Settings.SendBuffer,
            ReceiveBufferSize = Settings.ReceiveBuffer,
            ReceiveChunkSize = ReceiveChunk,
            MaxPendingBytesPerConnection = MaxBacklogBytes,
            ThreadNamePrefix = "netzlink-echo-server",
        });
        try
        {
            engine.Start(shard => new EchoHandler(this, shard.SlotCount));
            _engine = engine;
            return HostPort.Parse(engine.BoundEndpoints[0]).Port;
        }
        catch
        {
            engine.Dispose();
            throw;
        }
    }

    /// <inheritdoc/>
    protected override void Dispose(bool disposing) => _engine?.Dispose();

    /// <summary>Echoes every packet back to its connection; closes a slow consumer.</summary>
    private sealed class EchoHandler(EchoServer server, int slots) : IConnectionHandler
    {
        /// <summary>Packets per connection slot, for picking the ones to time.</summary>
        private readonly long[] _reads = new long[slots];

        public void OnConnected(EngineShard shard, Connection connection)
        {
            _reads[connection.Slot] = 0;
            Interlocked.Increment(ref server._connections);
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            bool timed = server.Times.Samples(_reads[connection.Slot]++);
            long readAt = timed ? ServerTimes.Now() : 0;
            switch (shard.Send(connection, packet))
            {
                case SendResult.Sent or SendResult.Queued:
                    Interlocked.Add(ref server._bytesEchoed, packet.Length);
                    if (timed)
                    {
                        server.Times.RecordSince(readAt);
                    }

                    break;
                case SendResult.Full:
                    Interlocked.Increment(ref server._slowConsumersClosed);
                    shard.Close(connection);
                    break;
            }
        }

        /// <summary>A read's whole packets echoed with one send, as they came (the default framer).</summary>
        public void OnPackets(EngineShard shard, Connection connection, ReadOnlySpan<byte> packets) => OnPacket(shard, connection, packets);

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
            => Interlocked.Decrement(ref server._connections);

        public void OnPass(EngineShard shard)
        {
        }
    }
}
