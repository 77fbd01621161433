// The dotnet stack's echo server: a listening System.Net.Sockets socket, accepts through one
// reusable SocketAsyncEventArgs, and one EchoServerConnection per accepted socket. All of it runs
// on the runtime's socket engine threads; the server has no thread of its own and no task per
// connection. Same contract as the netzlink EchoServer: every byte back to its connection, in order.
//
// --backlog is the listen backlog (the kernel caps it at net.core.somaxconn); --sndbuf/--rcvbuf are
// set on the listener, which accepted sockets inherit. --hwm and --io-threads do not apply.
//
// System.IO.Pipelines is not used: a socket-to-pipe loop per connection is a task (and a pipe with
// its buffer segments) per connection, for 10,000 connections; echoing straight from one
// per-thread buffer needs neither.
using System.Net;
using System.Net.Sockets;
using NetZlink.Engine;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

/// <summary>An echo server over plain .NET sockets.</summary>
internal sealed class DotnetEchoServer : EchoServerBase
{
    private readonly HashSet<EchoServerConnection> _open = [];
    private readonly SocketAsyncEventArgs _accept = new(unsafeSuppressExecutionContextFlow: true);
    private Socket? _listener;
    private volatile bool _stopping;
    private long _connections;
    private long _accepted;
    private long _closedBytes;

    /// <summary>Creates the server; nothing is bound until <see cref="Start"/>.</summary>
    public DotnetEchoServer(ScenarioSettings settings)
        : base(settings)
    {
        _accept.Completed += (_, e) => OnAcceptCompleted(e);
    }

    public override long Connections => Interlocked.Read(ref _connections);

    /// <summary>Connections accepted since the start.</summary>
    public long Accepted => Interlocked.Read(ref _accepted);

    /// <summary>Bytes echoed so far, over open and closed connections.</summary>
    public long BytesEchoed
    {
        get
        {
            lock (_open)
            {
                return _closedBytes + _open.Sum(c => c.BytesEchoed);
            }
        }
    }

    /// <summary>Binds BindHost:Port and starts accepting; a SocketException names the failure (e.g. the port is in use).</summary>
    protected override int Bind()
    {
        Socket listener = ServerListener.Open(Settings);
        _listener = listener;
        AcceptLoop();
        return ((IPEndPoint)listener.LocalEndPoint!).Port;
    }

    /// <summary>Stops accepting and closes every connection.</summary>
    protected override void Dispose(bool disposing)
    {
        _stopping = true;
        _listener?.Dispose();
        EchoServerConnection[] open;
        lock (_open)
        {
            open = [.. _open];
        }

        foreach (EchoServerConnection connection in open)
        {
            connection.Close();
        }
    }

    internal void OnClosed(EchoServerConnection connection)
    {
        lock (_open)
        {
            if (_open.Remove(connection))
            {
                _closedBytes += connection.BytesEchoed;
                Interlocked.Decrement(ref _connections);
            }
        }
    }

    private void OnAcceptCompleted(SocketAsyncEventArgs e)
    {
        try
        {
            if (TakeAccepted(e))
            {
                AcceptLoop();
            }
        }
#pragma warning disable CA1031 // a callback on a runtime thread must not throw: the server records it instead
        catch (Exception ex)
#pragma warning restore CA1031
        {
            ReportFault(ex);
        }
    }

    private void AcceptLoop()
    {
        while (!_stopping)
        {
            _accept.AcceptSocket = null;
            try
            {
                if (_listener!.AcceptAsync(_accept))
                {
                    return;
                }
            }
            catch (ObjectDisposedException)
            {
                return;
            }

            if (!TakeAccepted(_accept))
            {
                return;
            }
        }
    }

    /// <summary>Takes the accepted socket into service; false when accepting should stop.</summary>
    private bool TakeAccepted(SocketAsyncEventArgs e)
    {
        if (e.SocketError != SocketError.Success)
        {
            if (_stopping || e.SocketError == SocketError.OperationAborted)
            {
                return false;
            }

            if (e.SocketError == SocketError.TooManyOpenSockets)
            {
                // Out of descriptors: give closing connections a moment instead of spinning.
                Thread.Sleep(10);
            }

            return true;
        }

        Socket socket = e.AcceptSocket!;
        e.AcceptSocket = null;
        socket.NoDelay = true;
        var connection = new EchoServerConnection(this, socket);
        lock (_open)
        {
            if (_stopping)
            {
                socket.Dispose();
                return false;
            }

            _open.Add(connection);
        }

        Interlocked.Increment(ref _connections);
        Interlocked.Increment(ref _accepted);
        connection.Start();
        return true;
    }
}
