// The built-in echo server: one thread, one STREAM socket, returns every byte it receives on a
// connection to that connection, in order. One thread is the shape of the C limit row too.
//
// A payload the socket refuses (EAGAIN at SNDHWM) is kept per connection and retried first, so
// order holds; a connection whose backlog passes MaxBacklogBytes is closed as a slow consumer
// (counted) rather than letting server memory grow without bound.
using System.Buffers.Binary;
using NetZlink.Engine;
using NetZlink.Interop;

namespace NetZlink.Stress.Scenarios;

/// <summary>A STREAM echo server on its own thread.</summary>
public sealed unsafe class EchoServer : IDisposable, IEchoServer
{
    private const int MaxBacklogBytes = 8 * 1024 * 1024;
    private const int MessagesPerPass = 1024;

    private readonly Dictionary<uint, Backlog> _backlogs = new();
    private readonly List<uint> _backlogOrder = new();
    private readonly byte[] _buffer = GC.AllocateArray<byte>(256 * 1024, pinned: true);
    private Context? _context;
    private Socket? _socket;
    private Thread? _thread;
    private volatile bool _stop;
    private long _connections;
    private long _bytesEchoed;
    private long _slowConsumersClosed;
    private Exception? _fault;

    /// <summary>Creates the server; nothing is bound until <see cref="Start"/>.</summary>
    public EchoServer(ScenarioSettings settings) => Settings = settings ?? throw new ArgumentNullException(nameof(settings));

    /// <summary>The settings it was created with (BindHost, Port, Backlog, Hwm, buffers).</summary>
    public ScenarioSettings Settings { get; }

    /// <summary>The port actually bound (useful with Port 0).</summary>
    public int Port { get; private set; }

    /// <summary>Connections currently open.</summary>
    public long Connections => Interlocked.Read(ref _connections);

    /// <summary>Bytes echoed so far.</summary>
    public long BytesEchoed => Interlocked.Read(ref _bytesEchoed);

    /// <summary>Connections closed because their unsent echo passed the backlog limit.</summary>
    public long SlowConsumersClosed => Interlocked.Read(ref _slowConsumersClosed);

    /// <summary>The exception the serving thread died of, if any.</summary>
    public Exception? Fault => Volatile.Read(ref _fault);

    /// <summary>Binds and starts serving; throws a ZlinkException (e.g. EADDRINUSE) when it cannot bind.</summary>
    public void Start()
    {
        if (_thread is not null)
        {
            throw new InvalidOperationException("The echo server is already started.");
        }

        Platform.DescriptorLimit.RaiseSoftToHard();
        _context = new Context();
        try
        {
            _socket = _context.CreateSocket(SocketType.Stream);
            _socket.SetOption(SocketOption.Linger, 0);
            _socket.SetOption(SocketOption.Backlog, Settings.Backlog);
            _socket.SetOption(SocketOption.SendHighWaterMark, Settings.Hwm);
            _socket.SetOption(SocketOption.ReceiveHighWaterMark, Settings.Hwm);
            if (Settings.SendBuffer > 0)
            {
                _socket.SetOption(SocketOption.SendBuffer, Settings.SendBuffer);
            }

            if (Settings.ReceiveBuffer > 0)
            {
                _socket.SetOption(SocketOption.ReceiveBuffer, Settings.ReceiveBuffer);
            }

            string host = Settings.BindHost.Contains(':', StringComparison.Ordinal) && !Settings.BindHost.StartsWith('[') ? $"[{Settings.BindHost}]" : Settings.BindHost;
            _socket.Bind($"tcp://{host}:{(Settings.Port == 0 ? "*" : Settings.Port.ToString(System.Globalization.CultureInfo.InvariantCulture))}");
            string endpoint = _socket.GetOptionString(SocketOption.LastEndpoint);
            Port = int.Parse(endpoint[(endpoint.LastIndexOf(':') + 1)..], System.Globalization.CultureInfo.InvariantCulture);
        }
        catch
        {
            _socket?.Dispose();
            _context.Dispose();
            throw;
        }

        _thread = new Thread(Serve) { IsBackground = true, Name = "netzlink-echo-server" };
        _thread.Start();
    }

    /// <summary>Stops serving and closes every connection.</summary>
    public void Dispose()
    {
        _stop = true;
        _thread?.Join(TimeSpan.FromSeconds(5));
        _socket?.Dispose();
        _context?.Dispose();
    }

    private void Serve()
    {
        try
        {
            nint socket = _socket!.NativeHandle;
            byte* id = stackalloc byte[4];
            fixed (byte* buffer = _buffer)
            {
                while (!_stop)
                {
                    bool busy = RetryBacklogs(socket);
                    int messages = 0;
                    for (; messages < MessagesPerPass; messages++)
                    {
                        int idLength = NativeMethods.zlink_recv(socket, id, 4, ZlinkConstants.ZLINK_DONTWAIT);
                        if (idLength < 0)
                        {
                            CheckErrno(NativeMethods.zlink_errno(), "recv routing id");
                            break;
                        }

                        int length = NativeMethods.zlink_recv(socket, buffer, (nuint)_buffer.Length, ZlinkConstants.ZLINK_DONTWAIT);
                        if (length < 0)
                        {
                            CheckErrno(NativeMethods.zlink_errno(), "recv payload");
                            continue;
                        }

                        uint routingId = BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(id, 4));
                        if (length == 1)
                        {
                            OnConnectionEvent(routingId, buffer[0]);
                        }
                        else if (length > 0)
                        {
                            Echo(socket, routingId, new ReadOnlySpan<byte>(buffer, Math.Min(length, _buffer.Length)));
                        }
                    }

                    if (!busy && messages == 0)
                    {
                        Sleep(socket);
                    }
                }
            }
        }
#pragma warning disable CA1031 // the serving thread reports its failure instead of tearing the process down
        catch (Exception ex)
#pragma warning restore CA1031
        {
            Volatile.Write(ref _fault, ex);
        }
    }

    private void OnConnectionEvent(uint routingId, byte code)
    {
        if (code == 1)
        {
            Interlocked.Increment(ref _connections);
        }
        else
        {
            Interlocked.Decrement(ref _connections);
            if (_backlogs.Remove(routingId))
            {
                _backlogOrder.Remove(routingId);
            }
        }
    }

    private void Echo(nint socket, uint routingId, ReadOnlySpan<byte> data)
    {
        if (_backlogs.TryGetValue(routingId, out Backlog? backlog))
        {
            Append(socket, routingId, backlog, data);
            return;
        }

        int rc = TrySend(socket, routingId, data);
        if (rc == ZlinkConstants.EAGAIN)
        {
            backlog = new Backlog();
            _backlogs[routingId] = backlog;
            _backlogOrder.Add(routingId);
            Append(socket, routingId, backlog, data);
        }
        else if (rc == 0)
        {
            Interlocked.Add(ref _bytesEchoed, data.Length);
        }
    }

    private void Append(nint socket, uint routingId, Backlog backlog, ReadOnlySpan<byte> data)
    {
        if (backlog.Length + data.Length > MaxBacklogBytes)
        {
            Interlocked.Increment(ref _slowConsumersClosed);
            _backlogs.Remove(routingId);
            _backlogOrder.Remove(routingId);
            StreamFrames.RequestClose(socket, routingId);

            return;
        }

        backlog.Append(data);
    }

    private bool RetryBacklogs(nint socket)
    {
        bool progressed = false;
        for (int i = _backlogOrder.Count - 1; i >= 0; i--)
        {
            uint routingId = _backlogOrder[i];
            Backlog backlog = _backlogs[routingId];
            int rc = TrySend(socket, routingId, backlog.Data);
            if (rc == ZlinkConstants.EAGAIN)
            {
                continue;
            }

            if (rc == 0)
            {
                Interlocked.Add(ref _bytesEchoed, backlog.Length);
                progressed = true;
            }

            _backlogs.Remove(routingId);
            _backlogOrder.RemoveAt(i);
        }

        return progressed;
    }

    /// <summary>0 when sent, EAGAIN when the socket refused the payload, another errno when the peer is gone.</summary>
    private static int TrySend(nint socket, uint routingId, ReadOnlySpan<byte> data)
    {
        if (!StreamFrames.SendRoutingId(socket, routingId))
        {
            return NativeMethods.zlink_errno();
        }

        fixed (byte* payload = data)
        {
            return NativeMethods.zlink_send(socket, payload, (nuint)data.Length, ZlinkConstants.ZLINK_DONTWAIT) < 0
                ? NativeMethods.zlink_errno()
                : 0;
        }
    }

    private void Sleep(nint socket)
    {
        ZlinkPollItem item = new() { Socket = socket, Events = ZlinkConstants.POLLIN };
        int timeout = _backlogOrder.Count > 0 ? 1 : 100;
        if (NativeMethods.zlink_poll(&item, 1, timeout) < 0)
        {
            CheckErrno(NativeMethods.zlink_errno(), "poll");
        }
    }

    private void CheckErrno(int errno, string operation)
    {
        if (errno == ZlinkConstants.EAGAIN || errno == ZlinkConstants.EINTR)
        {
            return;
        }

        if (errno == ZlinkConstants.ETERM)
        {
            _stop = true;
            return;
        }

        Ensure.Throw(errno, $"echo server {operation}");
    }

    /// <summary>Echo bytes a connection's socket queue could not take yet.</summary>
    private sealed class Backlog
    {
        private byte[] _data = new byte[16 * 1024];

        public int Length { get; private set; }

        public ReadOnlySpan<byte> Data => _data.AsSpan(0, Length);

        public void Append(ReadOnlySpan<byte> bytes)
        {
            if (Length + bytes.Length > _data.Length)
            {
                Array.Resize(ref _data, Math.Max(_data.Length * 2, Length + bytes.Length));
            }

            bytes.CopyTo(_data.AsSpan(Length));
            Length += bytes.Length;
        }
    }
}
