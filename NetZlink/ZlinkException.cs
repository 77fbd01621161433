// The base of every error the binding raises for a failed native call: it carries the errno,
// its C name and the operation that failed, with its endpoint or option.
namespace NetZlink;

/// <summary>A zlink call failed. Derived types narrow the cause; all carry the native errno.</summary>
public class ZlinkException : Exception
{
    /// <summary>Creates an exception for <paramref name="errno"/> raised by <paramref name="operation"/>.</summary>
    /// <param name="errno">The native error number.</param>
    /// <param name="operation">What was attempted, with its argument, e.g. <c>Bind("tcp://…")</c>.</param>
    /// <param name="description">The library's text for the error (zlink_strerror).</param>
    public ZlinkException(int errno, string operation, string description)
        : base($"{operation} failed: {NameOf(errno)} ({errno}): {description}")
    {
        Errno = errno;
        Operation = operation;
    }

    /// <summary>Creates an exception with a message of the caller's choosing.</summary>
    /// <param name="errno">The native error number.</param>
    /// <param name="operation">What was attempted.</param>
    /// <param name="message">The whole message.</param>
    /// <param name="innerException">The cause, if any.</param>
    public ZlinkException(int errno, string operation, string message, Exception? innerException)
        : base(message, innerException)
    {
        Errno = errno;
        Operation = operation;
    }

    /// <summary>The native error number (<c>zlink_errno()</c>).</summary>
    public int Errno { get; }

    /// <summary>The error number as an enum value (undefined values are kept as numbers).</summary>
    public ZlinkError Error => (ZlinkError)Errno;

    /// <summary>The C name of the error, e.g. <c>EINVAL</c>, or <c>errno N</c> when it has none here.</summary>
    public string ErrorName => NameOf(Errno);

    /// <summary>What was attempted, with its endpoint or option, e.g. <c>Bind("tcp://127.0.0.1:99999")</c>.</summary>
    public string Operation { get; }

    internal static string NameOf(int errno) =>
        Enum.IsDefined((ZlinkError)errno) ? ((ZlinkError)errno).ToString() : $"errno {errno}";
}
