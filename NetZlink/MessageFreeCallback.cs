// The user's half of a zero-copy message from native memory.
namespace NetZlink;

/// <summary>
/// Called exactly once when zlink no longer needs the memory given to
/// <see cref="ZlinkMessage.FromNative"/>; possibly on a native I/O thread, so it must be quick and
/// must not block. Exceptions it throws are caught and dropped (an exception escaping into
/// native code would end the process).
/// </summary>
/// <param name="data">The pointer given to <see cref="ZlinkMessage.FromNative"/>.</param>
/// <param name="state">The state given to <see cref="ZlinkMessage.FromNative"/>.</param>
public delegate void MessageFreeCallback(nint data, object? state);
