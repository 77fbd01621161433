// Async sends and receives: ValueTasks driven by the socket's ZLINK_FD and ZLINK_EVENTS through
// the reactor (Interop/SocketReactor, Interop/AsyncSocketState). Each call first tries the
// operation without waiting on the caller's thread; only when it would block does it wait, on a
// reusable per-socket, per-direction IValueTaskSource, so a steady stream of operations allocates
// nothing. docs/binding.md#async has the whole contract.
namespace NetZlink;

public sealed partial class ZlinkSocket
{
    /// <summary>
    /// Receives one frame into <paramref name="buffer"/>, waiting without blocking a thread until
    /// one arrives. Check <see cref="ReceiveMore"/> after it for further frames (a message is
    /// atomic: its later frames are already there, so their receives complete at once).
    /// </summary>
    /// <param name="buffer">Where the frame goes; a longer frame is truncated to fit. Must stay valid until the operation completes.</param>
    /// <param name="cancellationToken">Cancels the wait (for a timeout, use <see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>). A cancelled receive took no frame.</param>
    /// <returns>The frame's full size, which exceeds <paramref name="buffer"/>'s length when it was truncated.</returns>
    /// <exception cref="InvalidOperationException">(Thrown by the call.) Another receive of this socket has not been awaited yet, or another thread is inside a call on the socket.</exception>
    /// <exception cref="OperationCanceledException">(Through the ValueTask.) <paramref name="cancellationToken"/> was cancelled first.</exception>
    /// <exception cref="ObjectDisposedException">(Through the ValueTask.) The socket was disposed, before or during the wait.</exception>
    /// <exception cref="ContextTerminatedException">(Through the ValueTask.) The context was shut down.</exception>
    public ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled<int>(cancellationToken)
            : _handle.Async.ReceiveAsync(buffer, cancellationToken);

    /// <summary>Receives one frame into <paramref name="message"/> (its previous content is released), waiting without blocking a thread.</summary>
    /// <param name="message">The message to fill; <see cref="ZlinkMessage.More"/> then tells whether more frames follow. Do not use it until the operation completes.</param>
    /// <param name="cancellationToken">Cancels the wait; a cancelled receive took no frame.</param>
    /// <returns>A ValueTask that completes when the frame is in <paramref name="message"/>.</returns>
    /// <exception cref="InvalidOperationException">(Thrown by the call.) Another receive of this socket has not been awaited yet, or another thread is inside a call on the socket.</exception>
    public ValueTask ReceiveAsync(ZlinkMessage message, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(message);
        return cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled(cancellationToken)
            : _handle.Async.ReceiveAsync(message, cancellationToken);
    }

    /// <summary>Receives every frame of the next message, waiting without blocking a thread; the frames are taken in one step, so no other receive can come between them.</summary>
    /// <param name="cancellationToken">Cancels the wait; a cancelled receive took no frame.</param>
    /// <returns>The frames, in order (new arrays).</returns>
    /// <exception cref="InvalidOperationException">(Thrown by the call.) Another receive of this socket has not been awaited yet, or another thread is inside a call on the socket.</exception>
    public ValueTask<List<byte[]>> ReceiveMultipartAsync(CancellationToken cancellationToken = default) =>
        cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled<List<byte[]>>(cancellationToken)
            : _handle.Async.ReceiveMultipartAsync(cancellationToken);

    /// <summary>
    /// Sends one frame, waiting without blocking a thread until the socket takes it (high-water
    /// mark, no peer yet). On a STREAM socket send <c>[routing id][payload]</c> with
    /// <see cref="SendMultipartAsync"/>, which retries the whole message.
    /// </summary>
    /// <param name="data">The frame; copied when the socket takes it. Must stay valid and unchanged until the operation completes.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames of the message follow (DontWait is implied).</param>
    /// <param name="cancellationToken">Cancels the wait; a cancelled send queued nothing.</param>
    /// <returns>A ValueTask that completes once the frame is queued.</returns>
    /// <exception cref="InvalidOperationException">(Thrown by the call.) Another send of this socket has not been awaited yet, or another thread is inside a call on the socket.</exception>
    /// <exception cref="HostUnreachableException">(Through the ValueTask.) ROUTER (mandatory) or STREAM: the routing id names no peer.</exception>
    public ValueTask SendAsync(ReadOnlyMemory<byte> data, SendFlags flags = SendFlags.None, CancellationToken cancellationToken = default) =>
        cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled(cancellationToken)
            : _handle.Async.SendAsync(data, flags, cancellationToken);

    /// <summary>Sends a message without copying, waiting without blocking a thread; on success the message is left empty, otherwise intact.</summary>
    /// <param name="message">The message; do not use it until the operation completes.</param>
    /// <param name="flags"><see cref="SendFlags.SendMore"/> when more frames follow (DontWait is implied).</param>
    /// <param name="cancellationToken">Cancels the wait; a cancelled send queued nothing and left the message intact.</param>
    /// <returns>A ValueTask that completes once the message is queued.</returns>
    /// <exception cref="InvalidOperationException">(Thrown by the call.) Another send of this socket has not been awaited yet, or another thread is inside a call on the socket.</exception>
    public ValueTask SendAsync(ZlinkMessage message, SendFlags flags = SendFlags.None, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(message);
        return cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled(cancellationToken)
            : _handle.Async.SendAsync(message, flags, cancellationToken);
    }

    /// <summary>
    /// Sends a whole message, waiting without blocking a thread: every frame is offered in one step
    /// (no other send comes between them), and a message the socket refuses is offered again whole,
    /// so the peer receives all frames or none. On STREAM: <c>[routing id][payload]</c>.
    /// </summary>
    /// <param name="parts">The frames, at least one (on STREAM exactly two); the list and the memory must stay unchanged until the operation completes.</param>
    /// <exception cref="ArgumentException">(Thrown by the call.) No frame; or a STREAM socket and not exactly two frames (nothing was sent).</exception>
    /// <param name="cancellationToken">Cancels the wait; a cancelled send queued no frame of the message.</param>
    /// <returns>A ValueTask that completes once the whole message is queued.</returns>
    /// <exception cref="InvalidOperationException">(Thrown by the call.) Another send of this socket has not been awaited yet, or another thread is inside a call on the socket.</exception>
    public ValueTask SendMultipartAsync(IReadOnlyList<ReadOnlyMemory<byte>> parts, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(parts);
        if (parts.Count == 0)
        {
            throw new ArgumentException("A message has at least one frame.", nameof(parts));
        }

        if (StreamMessageProblem(parts.Count, "SendMultipartAsync") is string problem)
        {
            throw new ArgumentException(problem, nameof(parts));
        }

        return cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled(cancellationToken)
            : _handle.Async.SendMultipartAsync(parts, cancellationToken);
    }
}
