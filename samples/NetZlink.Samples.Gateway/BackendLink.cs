// One ClientEngine connection to the backend. Requests are length-prefixed ([u32 big-endian body
// length][body], the engine's default framing) and answered in order, so the replies are matched
// to the waiting requests first in, first out. The engine calls the handler on its shard thread;
// everything the service awaits is completed from there with continuations run elsewhere.
using System.Buffers.Binary;
using System.Collections.Concurrent;
using NetZlink.Engine;

namespace NetZlink.Samples.Gateway;

/// <summary>A request/reply link to the STREAM backend over one engine connection.</summary>
internal sealed class BackendLink : IAsyncDisposable
{
    private readonly ClientEngine _engine;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource<Connection> _connected = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentQueue<TaskCompletionSource<byte[]>> _waiting = new();
    private readonly Lock _sendLock = new();
    private volatile bool _down;

    public BackendLink(string endpoint, ILogger logger)
    {
        _logger = logger;
        _engine = new ClientEngine(1, new EngineOptions { Endpoints = [endpoint], ConnectRetries = 10 });
        _engine.Start(_ => new Handler(this));
    }

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
        lock (_sendLock)
        {
            // Queue order must be post order: the backend answers in the order it received.
            if (_down)
            {
                throw new IOException("the backend connection is closed");
            }

            if (!_engine.TryPost(connection, frame))
            {
                throw new IOException("the backend is not keeping up (posting capacity full) or the engine stopped");
            }

            _waiting.Enqueue(reply);
        }

        return await reply.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        // Stop waits for the shard thread; keep that wait off the caller's thread.
        await Task.Run(() => _engine.Stop(TimeSpan.FromSeconds(5))).ConfigureAwait(false);
        _engine.Dispose();
        FailAll(new ObjectDisposedException(nameof(BackendLink)));
    }

    private void FailAll(Exception reason)
    {
        _down = true;
        _connected.TrySetException(reason);
        while (_waiting.TryDequeue(out TaskCompletionSource<byte[]>? waiter))
        {
            waiter.TrySetException(reason);
        }
    }

    private sealed class Handler(BackendLink link) : IConnectionHandler
    {
        public void OnConnected(EngineShard shard, Connection connection)
        {
            link._logger.LogInformation("backend connected");
            link._connected.TrySetResult(connection);
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
            link._logger.LogError("backend connect failed: {Failure}", failure);
            link.FailAll(new IOException($"could not connect to the backend: {failure}"));
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            if (link._waiting.TryDequeue(out TaskCompletionSource<byte[]>? waiter))
            {
                waiter.TrySetResult(packet[4..].ToArray());
            }
            else
            {
                link._logger.LogWarning("backend sent {Bytes} bytes nobody asked for", packet.Length);
            }
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
            link._logger.LogWarning("backend connection ended: {Reason}", reason);
            link.FailAll(new IOException($"the backend connection ended: {reason}"));
        }

        public void OnPass(EngineShard shard)
        {
        }
    }
}
