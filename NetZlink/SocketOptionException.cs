// Setting or reading a socket or context option failed (unknown option, wrong size, bad value).
namespace NetZlink;

/// <summary>Setting or reading an option failed.</summary>
public sealed class SocketOptionException : ZlinkException
{
    /// <summary>Creates the exception for <paramref name="operation"/> on <paramref name="option"/>.</summary>
    /// <param name="errno">The native error number.</param>
    /// <param name="operation">What was attempted, with the option.</param>
    /// <param name="description">The library's text for the error.</param>
    /// <param name="option">The option's name, or its number when it has no name.</param>
    public SocketOptionException(int errno, string operation, string description, string option)
        : base(errno, operation, description)
    {
        Option = option;
    }

    /// <summary>The option's name (e.g. <c>Linger</c>), or its number when it has no name.</summary>
    public string Option { get; }
}
