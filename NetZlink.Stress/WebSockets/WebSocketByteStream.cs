// A WebSocket seen as the byte stream the ws:// contract makes of it: every read hands on the
// payload of whatever data frames arrive (binary, text or continuation; message boundaries are
// not kept, exactly as on tcp), every write goes out as one binary frame. A close frame from the
// peer is answered and reads as the end of the stream (0); a failed WebSocket surfaces as an
// IOException, like a failed socket under a NetworkStream or SslStream. Reads and writes may run
// at once (one of each), as System.Net.WebSockets allows; ping, pong and keep-alive are its own.
using System.Net.WebSockets;
using System.Runtime.CompilerServices;

namespace NetZlink.Stress.WebSockets;

/// <summary>A <see cref="Stream"/> over a <see cref="WebSocket"/>'s data frames; owns the WebSocket.</summary>
internal sealed class WebSocketByteStream(WebSocket socket) : DuplexStream
{
    private static readonly TimeSpan CloseWait = TimeSpan.FromSeconds(1);

    /// <summary>The WebSocket underneath.</summary>
    public WebSocket Socket { get; } = socket ?? throw new ArgumentNullException(nameof(socket));

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (buffer.IsEmpty)
        {
            return 0;
        }

        try
        {
            while (true)
            {
                ValueWebSocketReceiveResult result = await Socket.ReceiveAsync(buffer, cancellationToken).ConfigureAwait(false);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    await ReplyToCloseAsync().ConfigureAwait(false);
                    return 0;
                }

                if (result.Count > 0)
                {
                    return result.Count;
                }
            }
        }
        catch (WebSocketException e)
        {
            throw new IOException($"WebSocket receive failed: {e.Message}", e);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        try
        {
            await Socket.SendAsync(buffer, WebSocketMessageType.Binary, endOfMessage: true, cancellationToken).ConfigureAwait(false);
        }
        catch (WebSocketException e)
        {
            throw new IOException($"WebSocket send failed: {e.Message}", e);
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            Socket.Dispose();
        }

        base.Dispose(disposing);
    }

    /// <summary>Answers the peer's close frame (within a second; a peer that has gone already is no error here).</summary>
    private async Task ReplyToCloseAsync()
    {
        if (Socket.State != WebSocketState.CloseReceived)
        {
            return;
        }

        using var wait = new CancellationTokenSource(CloseWait);
        try
        {
            await Socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, wait.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is WebSocketException or IOException or OperationCanceledException or ObjectDisposedException)
        {
            // The peer closed its side already; the stream ends either way.
        }
    }
}
