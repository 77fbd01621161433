// An echo server for engine tests, built on the binding's own STREAM socket: one thread returns
// every body a connection sends to that connection, in order (Length framing, the default: the
// engine's [u32 BE length][body] packets come back byte for byte), so an engine's connections can
// keep packets flowing for as long as a test needs. Not the stress tool's EchoServer (the test
// project does not reference the CLI); this one favours simplicity over throughput.
namespace NetZlink.Tests.Engine;

internal sealed class StreamEchoServer : IDisposable
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(50);
    private static readonly TimeSpan SendPatience = TimeSpan.FromSeconds(1);

    private readonly ZlinkContext _context = new();
    private readonly ZlinkSocket _socket;
    private readonly Thread _thread;
    private readonly HashSet<uint> _open = [];
    private volatile bool _stop;
    private long _connectionsSeen;
    private Exception? _fault;

    public StreamEchoServer()
    {
        _socket = _context.CreateSocket(ZlinkSocketType.Stream);
        // The default backlog (100) overflows when an engine connects hundreds at once and this
        // one thread is slow to accept (a loaded machine): the kernel then completes the client's
        // handshake, drops the connection and answers its first data with a reset, so a test saw
        // connections end Remote that it never closed.
        _socket.Backlog = 4096;
        _socket.Bind("tcp://127.0.0.1:*");
        Endpoint = _socket.LastEndpoint;
        _thread = new Thread(Serve) { IsBackground = true, Name = "test-stream-echo" };
        _thread.Start();
    }

    public string Endpoint { get; }

    /// <summary>Connections that have connected so far.</summary>
    public long ConnectionsSeen => Interlocked.Read(ref _connectionsSeen);

    public Exception? Fault => Volatile.Read(ref _fault);

    public void Dispose()
    {
        _stop = true;
        bool joined = _thread.Join(TimeSpan.FromSeconds(10));
        _socket.Dispose();
        _context.Dispose();
        Assert.That(joined, Is.True, "the echo server thread did not stop");
    }

    private void Serve()
    {
        byte[] id = new byte[16];
        byte[] payload = new byte[256 * 1024];
        try
        {
            while (!_stop)
            {
                if (!_socket.TryReceive(id, PollInterval, out int idLength))
                {
                    continue;
                }

                int length = _socket.Receive(payload);
                if (idLength != 4 || length > payload.Length)
                {
                    throw new InvalidOperationException($"unexpected STREAM message: id {idLength} bytes, payload {length} bytes");
                }

                uint key = BitConverter.ToUInt32(id, 0);
                if (_open.Add(key))
                {
                    // The first message of a routing id is its connect event (0x01).
                    Interlocked.Increment(ref _connectionsSeen);
                    continue;
                }

                // A one-byte 0x00 is either the disconnect event or a data byte; echoing it is right
                // for data, and for a gone peer the send fails with EHOSTUNREACH, which ends it here.
                Echo(key, id.AsSpan(0, 4), payload.AsSpan(0, length));
            }
        }
        catch (ContextTerminatedException)
        {
        }
#pragma warning disable CA1031 // the test reads the fault instead of the thread dying silently
        catch (Exception e)
#pragma warning restore CA1031
        {
            Volatile.Write(ref _fault, e);
        }
    }

    private void Echo(uint key, ReadOnlySpan<byte> id, ReadOnlySpan<byte> payload)
    {
        try
        {
            // A payload refused at the high-water mark leaves the id frame pending: retry the
            // payload alone, for as long as the server runs (engine clients always read).
            while (!_socket.TrySend(id, SendPatience, SendFlags.SendMore))
            {
                if (_stop)
                {
                    return;
                }
            }

            while (!_socket.TrySend(payload, SendPatience))
            {
                if (_stop)
                {
                    return;
                }
            }
        }
        catch (HostUnreachableException)
        {
            _open.Remove(key);
        }
    }
}
