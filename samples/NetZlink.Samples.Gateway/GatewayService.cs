// The service: a ROUTER socket takes requests ([client identity][empty delimiter, when the client
// sends one][body]) with the async binding; each request is forwarded to a backend of the service
// found through discovery (ServiceLink) and the client gets [identity][delimiter][reply body]
// back, or an error reply ("error: ...") when no backend answers in time. One loop receives, one loop sends the
// replies (a socket allows one receive and one send in flight at once), and the requests waiting
// for the backend run in between.
using System.Text;
using System.Threading.Channels;
using Microsoft.Extensions.Options;
using NetZlink.Services;

namespace NetZlink.Samples.Gateway;

/// <summary>Answers requests on a ROUTER socket by forwarding them to the service's backends.</summary>
internal sealed partial class GatewayService : BackgroundService
{
    // Failed requests are logged one by one up to this many, then once per this many.
    private const int FailureLogEvery = 1000;

    private readonly GatewayOptions _options;
    private readonly ILogger<GatewayService> _logger;
    private readonly IHostApplicationLifetime _lifetime;
    private readonly ZlinkContext _context;
    private readonly ServiceLink _backend;
    private long _served;
    private long _failed;

    /// <summary>The gateway and discovery come from the hosting package (AddNetZlinkGateway), on the shared context.</summary>
    public GatewayService(IOptions<GatewayOptions> options, ILogger<GatewayService> logger, IHostApplicationLifetime lifetime, ZlinkContext context, ZlinkGateway gateway, ZlinkDiscovery discovery)
    {
        _options = options.Value;
        _logger = logger;
        _lifetime = lifetime;
        _context = context;
        // Made before the host starts the gateway, so the discovery keeps every change from its first list.
        _backend = new ServiceLink(gateway, discovery, _options, logger);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using ZlinkSocket router = _context.CreateSocket(ZlinkSocketType.Router);
        router.Linger = 0;
        // Replies wait for a slow client instead of being dropped at the high-water mark (a client
        // that sends many requests before reading gets every reply; its replies use memory meanwhile),
        // and a client sending more than MaxRequestBytes in one message is disconnected by the socket.
        router.SendHighWaterMark = 0;
        router.MaxMessageSize = _options.MaxRequestBytes;
        await using ServiceLink backend = _backend;
        try
        {
            router.Bind(_options.FrontendEndpoint);
        }
        catch (Exception e) when (e is ZlinkException or ArgumentException)
        {
            // An endpoint that cannot be bound: one line, exit code 2.
            LogCannotStart(e.Message);
            Environment.ExitCode = 2;
            _lifetime.StopApplication();
            return;
        }

        backend.Start();
        string listening = router.LastEndpoint;
        LogListening(listening, _options.Service);
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
        LogStopped(served, failed, backend.Resent, backend.LateReplies);
    }

    private async Task ForwardAsync(List<byte[]> request, ServiceLink backend, ChannelWriter<List<byte[]>> replies)
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

            if (body.Length > _options.MaxRequestBytes)
            {
                throw new InvalidDataException($"the request is {body.Length} bytes; the limit is {_options.MaxRequestBytes}");
            }

            reply.Add(await backend.RequestAsync(body, CancellationToken.None).ConfigureAwait(false));
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

    [LoggerMessage(Level = LogLevel.Information, Message = "gateway listening on {Endpoint}, forwarding to the backends of {Service}")]
    private partial void LogListening(string endpoint, string service);

    [LoggerMessage(Level = LogLevel.Information, Message = "gateway stopping: {InFlight} requests in flight")]
    private partial void LogStopping(int inFlight);

    [LoggerMessage(Level = LogLevel.Information, Message = "gateway stopped: {Served} requests served, {Failed} failed, {Resent} tries sent again, {Late} late answers dropped")]
    private partial void LogStopped(long served, long failed, long resent, long late);

    [LoggerMessage(Level = LogLevel.Warning, Message = "request failed ({Failed} so far; logged for the first 10, then every 1000th): {Reason}")]
    private partial void LogRequestFailed(long failed, string reason);

    [LoggerMessage(Level = LogLevel.Critical, Message = "gateway cannot start: {Reason}")]
    private partial void LogCannotStart(string reason);
}
