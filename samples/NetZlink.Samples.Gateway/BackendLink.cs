// One ClientEngine connection to the backend. Requests are length-prefixed ([u32 big-endian body
// length][body], the engine's default framing) and answered in order, so the replies are matched
// to the waiting requests first in, first out. The engine calls the handler on its shard thread;
// everything the service awaits is completed from there with continuations run elsewhere.
// The engine itself is the host's (NetZlink.Extensions.Hosting, registered in Program.cs): the
// host starts it before the service and stops it after; this link is its handler.
using System.Buffers.Binary;
using NetZlink.Engine;
using NetZlink.Extensions.Hosting;

namespace NetZlink.Samples.Gateway;

/// <summary>A request/reply link to the STREAM backend over one engine connection.</summary>
internal sealed partial class BackendLink
{
    private readonly NetZlinkEngineService<ClientEngine> _backend;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource<Connection> _connected = new(TaskCreationOptions.RunContinuationsAsynchronously);
    // Requests waiting for their reply, oldest first. A request joins before its frame is posted:
    // the reply can come back (on the shard thread) before TrySend has even returned.
    private readonly LinkedList<TaskCompletionSource<byte[]>> _waiting = new();
    private readonly Lock _lock = new();
    private bool _down;

    public BackendLink(NetZlinkEngineService<ClientEngine> backend, ILogger<BackendLink> logger)
    {
        _backend = backend;
        _logger = logger;
    }

    /// <summary>The engine's handler (one shard: one handler), made when the host starts the engine.</summary>
    public IConnectionHandler CreateHandler() => new Handler(this);

    /// <summary>Completes when the connection is up; faults when it could not be made.</summary>
    public Task<Connection> Connected => _connected.Task;

    /// <summary>Sends <paramref name="body"/> and returns the backend's reply body.</summary>
    public async Task<byte[]> RequestAsync(ReadOnlyMemory<byte> body, TimeSpan timeout, CancellationToken cancellationToken)
    {
        Connection connection = await _connected.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
        byte[] frame = new byte[4 + body.Length];
        BinaryPrimitives.WriteUInt32BigEndian(frame, (uint)body.Length);
        body.Span.CopyTo(frame.AsSpan(4));

        var reply = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            // Queue order must be post order: the backend answers in the order it received.
            if (_down)
            {
                throw new IOException("the backend connection is closed");
            }

            LinkedListNode<TaskCompletionSource<byte[]>> node = _waiting.AddLast(reply);
            bool posted;
            try
            {
                posted = _backend.Engine.TrySend(connection, frame);
            }
            catch
            {
                _waiting.Remove(node);
                throw;
            }

            if (!posted)
            {
                // Nothing was posted, so no reply will come for it; it is still the last one queued.
                _waiting.Remove(node);
                throw new IOException("the backend is not keeping up (posting capacity full) or the engine stopped");
            }
        }

        return await reply.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Fails every request still waiting (the service has stopped; the host stops the engine next).</summary>
    public void Close() => FailAll(new ObjectDisposedException(nameof(BackendLink)));

    private void FailAll(Exception reason)
    {
        TaskCompletionSource<byte[]>[] waiting;
        lock (_lock)
        {
            _down = true;
            waiting = [.. _waiting];
            _waiting.Clear();
        }

        _connected.TrySetException(reason);
        foreach (TaskCompletionSource<byte[]> waiter in waiting)
        {
            waiter.TrySetException(reason);
        }
    }

    private TaskCompletionSource<byte[]>? NextWaiting()
    {
        lock (_lock)
        {
            TaskCompletionSource<byte[]>? first = _waiting.First?.Value;
            if (first is not null)
            {
                _waiting.RemoveFirst();
            }

            return first;
        }
    }

    private sealed class Handler(BackendLink link) : IConnectionHandler
    {
        public void OnConnected(EngineShard shard, Connection connection)
        {
            LogConnected(link._logger);
            link._connected.TrySetResult(connection);
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
            LogConnectFailed(link._logger, failure);
            link.FailAll(new IOException($"could not connect to the backend: {failure}"));
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            if (link.NextWaiting() is { } waiter)
            {
                waiter.TrySetResult(packet[4..].ToArray());
            }
            else
            {
                LogUnasked(link._logger, packet.Length);
            }
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
            LogEnded(link._logger, reason);
            link.FailAll(new IOException($"the backend connection ended: {reason}"));
        }

        public void OnPass(EngineShard shard)
        {
        }
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "backend connected")]
    private static partial void LogConnected(ILogger logger);

    [LoggerMessage(Level = LogLevel.Error, Message = "backend connect failed: {Failure}")]
    private static partial void LogConnectFailed(ILogger logger, ConnectFailure failure);

    [LoggerMessage(Level = LogLevel.Warning, Message = "backend sent {Bytes} bytes nobody asked for")]
    private static partial void LogUnasked(ILogger logger, int bytes);

    [LoggerMessage(Level = LogLevel.Warning, Message = "backend connection ended: {Reason}")]
    private static partial void LogEnded(ILogger logger, ConnectionEndReason reason);
}
