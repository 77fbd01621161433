// A blocking Send or Receive whose SendTimeout or ReceiveTimeout passed: a timeout, not an error
// of the library, so it derives from TimeoutException; it still carries the errno (EAGAIN).
namespace NetZlink;

/// <summary>
/// A blocking send or receive gave up because the socket's <see cref="ZlinkSocket.SendTimeout"/> or
/// <see cref="ZlinkSocket.ReceiveTimeout"/> passed (the library reports EAGAIN). The Try* methods
/// return false instead; async operations take their timeout from a <see cref="CancellationToken"/>
/// (<see cref="CancellationTokenSource.CancelAfter(TimeSpan)"/>) and end with OperationCanceledException.
/// </summary>
public sealed class ZlinkTimeoutException : TimeoutException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="errno">The native error number (EAGAIN).</param>
    /// <param name="operation">What timed out, e.g. <c>Receive</c>.</param>
    /// <param name="timeoutMilliseconds">The socket's timeout option at the time, in milliseconds.</param>
    /// <param name="message">The whole message.</param>
    public ZlinkTimeoutException(int errno, string operation, int timeoutMilliseconds, string message)
        : base(message)
    {
        Errno = errno;
        Operation = operation;
        TimeoutMilliseconds = timeoutMilliseconds;
    }

    /// <summary>The native error number (EAGAIN).</summary>
    public int Errno { get; }

    /// <summary>The error number as an enum value.</summary>
    public ZlinkError Error => (ZlinkError)Errno;

    /// <summary>What timed out, e.g. <c>Receive</c> or <c>Send</c>.</summary>
    public string Operation { get; }

    /// <summary>The socket's <c>SendTimeout</c> or <c>ReceiveTimeout</c> that passed, in milliseconds.</summary>
    public int TimeoutMilliseconds { get; }
}
