// The service: a ROUTER socket takes requests ([client identity][empty delimiter, when the client
// sends one][body]) with the async binding; each request is forwarded to the backend over
// the client engine and the client gets [identity][delimiter][reply body] back, or an error reply
// ("error: ...") when the backend fails or is too slow. One loop receives, one loop sends the
// replies (a socket allows one receive and one send in flight at once), and the requests waiting
// for the backend run in between.
using System.Text;
using System.Threading.Channels;
using Microsoft.Extensions.Options;

namespace NetZlink.Samples.Gateway;

/// <summary>Answers requests on a ROUTER socket by forwarding them to a STREAM backend.</summary>
internal sealed partial class GatewayService(IOptions<GatewayOptions> options, BackendLink backend, ILogger<GatewayService> logger, IHostApplicationLifetime lifetime) : BackgroundService
{
    // Failed requests are logged one by one up to this many, then once per this many.
    private const int FailureLogEvery = 1000;

    private readonly GatewayOptions _options = options.Value;
    private long _served;
    private long _failed;

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var context = new ZlinkContext();
        using ZlinkSocket router = context.CreateSocket(ZlinkSocketType.Router);
        router.Linger = 0;
        // Replies wait for a slow client instead of being dropped at the high-water mark (a client
        // that sends many requests before reading gets every reply; its replies use memory meanwhile),
        // and a client sending more than MaxRequestBytes in one message is disconnected by the socket.
        router.SendHighWaterMark = 0;
        router.MaxMessageSize = _options.MaxRequestBytes;
        try
        {
            router.Bind(_options.FrontendEndpoint);
        }
        catch (Exception e) when (e is ZlinkException or ArgumentException)
        {
            // An endpoint that cannot be bound: one line, exit code 2 (a backend that does not
            // resolve stops the host's start before this service runs: Program.cs).
            LogCannotStart(e.Message);
            Environment.ExitCode = 2;
            lifetime.StopApplication();
            return;
        }

        string listening = router.LastEndpoint;
        LogListening(listening, _options.BackendEndpoint);
        using var closing = new LinkCloser(backend);
        _ = backend.Connected.ContinueWith(
            t =>
            {
                // The engine does not reconnect: without its backend the gateway could only fail.
                LogBackendUnreachable(t.Exception!.InnerException!.Message);
                Environment.ExitCode = 3;
                lifetime.StopApplication();
            },
            CancellationToken.None,
            TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        var replies = Channel.CreateUnbounded<List<byte[]>>(new UnboundedChannelOptions { SingleReader = true });
        int inFlight = 0;
        var drained = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task sender = SendRepliesAsync(router, replies.Reader);
        try
        {
            while (!stoppingToken.IsCancellationRequested)
            {
                List<byte[]> request = await router.ReceiveMultipartAsync(stoppingToken).ConfigureAwait(false);
                Interlocked.Increment(ref inFlight);
                _ = ForwardAsync(request, backend, replies.Writer).ContinueWith(
                    _ =>
                    {
                        if (Interlocked.Decrement(ref inFlight) == 0 && stoppingToken.IsCancellationRequested)
                        {
                            drained.TrySetResult();
                        }
                    },
                    CancellationToken.None,
                    TaskContinuationOptions.ExecuteSynchronously,
                    TaskScheduler.Default);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }

        int waiting = Volatile.Read(ref inFlight);
        LogStopping(waiting);
        if (Volatile.Read(ref inFlight) > 0)
        {
            await drained.Task.WaitAsync(_options.BackendTimeout, CancellationToken.None).ConfigureAwait(false);
        }

        replies.Writer.TryComplete();
        await sender.ConfigureAwait(false);
        long served = Interlocked.Read(ref _served);
        long failed = Interlocked.Read(ref _failed);
        LogStopped(served, failed);
    }

    private async Task ForwardAsync(List<byte[]> request, BackendLink backend, ChannelWriter<List<byte[]>> replies)
    {
        // [identity][delimiter?][body]: everything before the body is the envelope, returned as is.
        List<byte[]> reply = request.GetRange(0, request.Count - 1);
        byte[] body = request[^1];
        try
        {
            if (request.Count < 2)
            {
                throw new InvalidDataException("a request needs an identity and a body");
            }

            if (body.Length == 0)
            {
                // The backend's packets carry a body of at least one byte.
                throw new InvalidDataException("the request is empty");
            }

            if (body.Length > _options.MaxRequestBytes)
            {
                throw new InvalidDataException($"the request is {body.Length} bytes; the limit is {_options.MaxRequestBytes}");
            }

            reply.Add(await backend.RequestAsync(body, _options.BackendTimeout, CancellationToken.None).ConfigureAwait(false));
            Interlocked.Increment(ref _served);
        }
        catch (Exception e)
        {
            // Every failure becomes an error reply: a request never goes unanswered.
            long failed = Interlocked.Increment(ref _failed);
            if (failed <= 10 || failed % FailureLogEvery == 0)
            {
                LogRequestFailed(failed, e.Message);
            }

            reply.Add(Encoding.UTF8.GetBytes("error: " + e.Message));
        }

        if (reply.Count >= 2)
        {
            replies.TryWrite(reply);
        }
    }

    private static async Task SendRepliesAsync(ZlinkSocket router, ChannelReader<List<byte[]>> replies)
    {
        var frames = new List<ReadOnlyMemory<byte>>();
        await foreach (List<byte[]> reply in replies.ReadAllAsync(CancellationToken.None).ConfigureAwait(false))
        {
            frames.Clear();
            foreach (byte[] frame in reply)
            {
                frames.Add(frame);
            }

            // A client that went away is no error for the service: ROUTER drops what it cannot route.
            await router.SendMultipartAsync(frames, CancellationToken.None).ConfigureAwait(false);
        }
    }

    /// <summary>Fails the requests still waiting for the backend when the service ends, however it ends.</summary>
    private sealed class LinkCloser(BackendLink link) : IDisposable
    {
        public void Dispose() => link.Close();
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "gateway listening on {Endpoint}, forwarding to {Backend}")]
    private partial void LogListening(string endpoint, string backend);

    [LoggerMessage(Level = LogLevel.Information, Message = "gateway stopping: {InFlight} requests in flight")]
    private partial void LogStopping(int inFlight);

    [LoggerMessage(Level = LogLevel.Information, Message = "gateway stopped: {Served} requests served, {Failed} failed")]
    private partial void LogStopped(long served, long failed);

    [LoggerMessage(Level = LogLevel.Warning, Message = "request failed ({Failed} so far; logged for the first 10, then every 1000th): {Reason}")]
    private partial void LogRequestFailed(long failed, string reason);

    [LoggerMessage(Level = LogLevel.Critical, Message = "gateway cannot start: {Reason}")]
    private partial void LogCannotStart(string reason);

    [LoggerMessage(Level = LogLevel.Critical, Message = "gateway stopping: the backend cannot be reached ({Reason})")]
    private partial void LogBackendUnreachable(string reason);
}
