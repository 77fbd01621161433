// The gateway's backends, found through zlink's service layer: a ZlinkDiscovery follows the
// registry (NetZlink:Gateway:RegistryEndpoint) and a ZlinkGateway sends each request to the next
// backend registered under Gateway:Service, connecting to backends as they register and dropping
// them as they leave or stop heartbeating. Both come from the hosting package (AddNetZlinkGateway),
// which connects them when the host starts and disposes them when it stops. A request goes out as
// [request id (8 bytes)][body]; a backend answers [request id][reply body] (the echo backend,
// Backends.cs, returns both as they came).
//
// The service layer does not resend: a request in flight to a backend that dies is lost. This link
// does: a try not answered within AttemptTimeout is sent again (round-robin gives it to the next
// backend), until BackendTimeout. The first answer completes the request; an answer to a request
// already answered or given up is dropped and counted, so every client request gets exactly one reply.
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Threading.Channels;
using NetZlink.Services;

namespace NetZlink.Samples.Gateway;

/// <summary>Request/reply to the backends of one service, found through discovery.</summary>
internal sealed partial class ServiceLink : IAsyncDisposable
{
    private readonly GatewayOptions _options;
    private readonly ILogger _logger;
    private readonly ZlinkGateway _gateway;
    private readonly ChannelReader<DiscoveryUpdate> _changes;
    private readonly ConcurrentDictionary<ulong, TaskCompletionSource<byte[]>> _waiting = new();
    private readonly CancellationTokenSource _stop = new();
    private Task _replies = Task.CompletedTask;
    private Task _updates = Task.CompletedTask;
    private ulong _nextId;
    private long _resent;
    private long _late;

    /// <summary>A link over the host's gateway and discovery; the discovery's changes are kept from here on.</summary>
    public ServiceLink(ZlinkGateway gateway, ZlinkDiscovery discovery, GatewayOptions options, ILogger logger)
    {
        _options = options;
        _logger = logger;
        _gateway = gateway;
        _changes = discovery.Updates;
    }

    /// <summary>Tries sent again after AttemptTimeout (their backend died or was slow).</summary>
    public long Resent => Interlocked.Read(ref _resent);

    /// <summary>Answers that came after their request was answered or given up (dropped).</summary>
    public long LateReplies => Interlocked.Read(ref _late);

    /// <summary>Starts reading the answers and logging the backends' changes.</summary>
    public void Start()
    {
        ChannelReaderLog(_changes);
        _replies = ReceiveRepliesAsync(_gateway);
    }

    private void ChannelReaderLog(ChannelReader<DiscoveryUpdate> updates) => _updates = Task.Run(async () =>
    {
        try
        {
            await foreach (DiscoveryUpdate u in updates.ReadAllAsync(_stop.Token).ConfigureAwait(false))
            {
                if (u.Service == _options.Service && _logger.IsEnabled(LogLevel.Information))
                {
                    string endpoints = string.Join(", ", u.Receivers.Select(r => r.Endpoint));
                    LogBackends(_logger, u.Service, u.Receivers.Count, endpoints);
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    });

    /// <summary>Sends <paramref name="body"/> to a backend and returns its answer, trying again
    /// (the next backend) every AttemptTimeout until BackendTimeout.</summary>
    public async Task<byte[]> RequestAsync(byte[] body, CancellationToken cancellationToken)
    {
        ZlinkGateway gateway = _gateway;
        ulong id = Interlocked.Increment(ref _nextId);
        var answer = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        _waiting[id] = answer;
        byte[] idFrame = new byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(idFrame, id);
        ReadOnlyMemory<byte>[] parts = [idFrame, body];
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _stop.Token);
        deadline.CancelAfter(_options.BackendTimeout);
        try
        {
            for (int attempt = 0; ; attempt++)
            {
                // No backend can take it now (none registered yet, or all gone): wait for one.
                while (!gateway.TrySend(_options.Service, parts))
                {
                    await Task.Delay(10, deadline.Token).ConfigureAwait(false);
                }

                if (attempt > 0)
                {
                    Interlocked.Increment(ref _resent);
                }

                Task<byte[]> done = answer.Task;
                if (await Task.WhenAny(done, Task.Delay(_options.AttemptTimeout, deadline.Token)).ConfigureAwait(false) == done)
                {
                    return await done.ConfigureAwait(false);
                }

                deadline.Token.ThrowIfCancellationRequested();
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested && !_stop.IsCancellationRequested)
        {
            throw new TimeoutException($"no backend of {_options.Service} answered within {_options.BackendTimeout}");
        }
        catch (TaskCanceledException) when (answer.Task.IsCompletedSuccessfully)
        {
            return answer.Task.Result;
        }
        finally
        {
            _waiting.TryRemove(id, out _);
        }
    }

    private async Task ReceiveRepliesAsync(ZlinkGateway gateway)
    {
        try
        {
            await foreach (ServiceMessage reply in gateway.Replies.ReadAllAsync(_stop.Token).ConfigureAwait(false))
            {
                using (reply)
                {
                    if (reply.PartCount != 2 || reply[0].Length != 8)
                    {
                        LogMalformed(_logger, reply.PartCount);
                        continue;
                    }

                    ulong id = BinaryPrimitives.ReadUInt64BigEndian(reply[0]);
                    if (_waiting.TryRemove(id, out TaskCompletionSource<byte[]>? waiter))
                    {
                        waiter.TrySetResult(reply[1].ToArray());
                    }
                    else
                    {
                        Interlocked.Increment(ref _late);
                    }
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _replies.ConfigureAwait(false);
        await _updates.ConfigureAwait(false);
        // The gateway and the discovery are the host's: it disposes them after this service has stopped.
        foreach (TaskCompletionSource<byte[]> waiter in _waiting.Values)
        {
            waiter.TrySetException(new ObjectDisposedException(nameof(ServiceLink)));
        }

        _stop.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "backends of {Service}: {Count} ({Endpoints})")]
    private static partial void LogBackends(ILogger logger, string service, int count, string endpoints);

    [LoggerMessage(Level = LogLevel.Warning, Message = "a backend answered with {Parts} parts, not [request id][body]: dropped")]
    private static partial void LogMalformed(ILogger logger, int parts);
}
