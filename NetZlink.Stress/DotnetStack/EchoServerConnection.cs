// One accepted connection of the dotnet echo server, and its only socket operation. It alternates
// between two modes and never has both going, so one SocketAsyncEventArgs serves both directions:
//   Receiving: a zero-byte receive is outstanding; when it completes the socket is read with
//              non-blocking Socket.Receive into the thread's buffer and each chunk is written straight
//              back with non-blocking Socket.Send;
//   Sending:   the kernel took only part of a chunk; the rest (in a pooled buffer) is sent
//              asynchronously and nothing more is read until it is gone, so a client that does not
//              read its echoes is slowed by TCP, not buffered without bound here.
// Bytes go back exactly as received, in order. No task, buffer or allocation per chunk. Every n-th
// read is timed from Socket.Receive's return to Socket.Send's (the server's ServerTimes).
using System.Buffers;
using System.Diagnostics;
using System.Net.Sockets;
using NetZlink.Stress.Latency;

namespace NetZlink.Stress.DotnetStack;

/// <summary>An echo connection: its socket and its one reusable operation.</summary>
internal sealed class EchoServerConnection : SocketAsyncEventArgs
{
    private const int ReceiveBufferSize = 64 * 1024;

    [ThreadStatic]
    private static byte[]? s_receiveBuffer;

    private readonly DotnetEchoServer _server;
    private readonly Socket _socket;
    private byte[]? _pending;
    private bool _sending;
    private int _closed;
    private long _reads;

    public EchoServerConnection(DotnetEchoServer server, Socket socket)
        : base(unsafeSuppressExecutionContextFlow: true)
    {
        _server = server;
        _socket = socket;
    }

    /// <summary>Bytes echoed so far (written by the connection's own callbacks only).</summary>
    public long BytesEchoed { get; private set; }

    /// <summary>Arms the first receive.</summary>
    public void Start()
    {
        _socket.Blocking = false;
        SetBuffer(Memory<byte>.Empty);
        Run(arm: true);
    }

    /// <summary>Closes the socket; an operation in flight completes aborted and ends there.</summary>
    public void Close()
    {
        if (Interlocked.Exchange(ref _closed, 1) == 0)
        {
            _socket.Dispose();
            _server.OnClosed(this);
        }
    }

    protected override void OnCompleted(SocketAsyncEventArgs e)
    {
        try
        {
            Run(arm: false);
        }
#pragma warning disable CA1031 // a callback on a runtime thread must not throw: the server records it instead
        catch (Exception ex)
#pragma warning restore CA1031
        {
            _server.ReportFault(ex);
            Close();
        }
    }

    /// <summary>Handles the operation that just completed and starts the next, until one pends.</summary>
    private void Run(bool arm)
    {
        try
        {
            while (true)
            {
                if (arm && (_sending ? _socket.SendAsync(this) : _socket.ReceiveAsync(this)))
                {
                    return;
                }

                arm = true;
                if (SocketError != SocketError.Success)
                {
                    Close();
                    return;
                }

                if (_sending)
                {
                    FinishSend();
                }
                else if (!Echo())
                {
                    return;
                }
            }
        }
        catch (ObjectDisposedException)
        {
            Close();
        }
    }

    /// <summary>After an async send: advances past the bytes sent; back to receiving once all are gone.</summary>
    private void FinishSend()
    {
        Debug.Assert(_sending && _pending is not null, "a send completes only in Sending mode");
        int sent = BytesTransferred;
        BytesEchoed += sent;
        if (sent < Count)
        {
            SetBuffer(Offset + sent, Count - sent);
            return;
        }

        ArrayPool<byte>.Shared.Return(_pending!);
        _pending = null;
        _sending = false;
        SetBuffer(Memory<byte>.Empty);
    }

    /// <summary>Reads and echoes until the socket is empty (true: re-arm the receive) or a send pends
    /// in part (true: Sending mode, the rest is armed next); false when the connection ended.</summary>
    private bool Echo()
    {
        byte[] buffer = s_receiveBuffer ??= GC.AllocateUninitializedArray<byte>(ReceiveBufferSize);
        while (true)
        {
            int read = _socket.Receive(buffer, SocketFlags.None, out SocketError error);
            bool timed = _server.Times.Samples(_reads);
            long readAt = timed ? ServerTimes.Now() : 0;
            if (error == SocketError.WouldBlock)
            {
                return true;
            }

            if (error != SocketError.Success || read == 0)
            {
                Close();
                return false;
            }

            _reads++;
            int sent = _socket.Send(buffer, 0, read, SocketFlags.None, out error);
            if (timed)
            {
                // Handed to the socket: what it did not take now is queued for it below.
                _server.Times.RecordSince(readAt);
            }

            if (error is not (SocketError.Success or SocketError.WouldBlock))
            {
                Close();
                return false;
            }

            sent = Math.Max(sent, 0);
            BytesEchoed += sent;
            if (sent < read)
            {
                _pending = ArrayPool<byte>.Shared.Rent(read - sent);
                buffer.AsSpan(sent, read - sent).CopyTo(_pending);
                SetBuffer(_pending, 0, read - sent);
                _sending = true;
                return true;
            }

            if (read < buffer.Length)
            {
                return true;
            }
        }
    }
}
