// Flags of a send call, with the ABI's bits.
using System.Diagnostics.CodeAnalysis;

namespace NetZlink;

/// <summary>How a frame is sent.</summary>
[Flags]
[SuppressMessage("Naming", "CA1711:Identifiers should not have incorrect suffix", Justification = "The flags argument of zlink_send, named as the issue and the C API name it.")]
public enum SendFlags
{
    /// <summary>Block until the frame is queued; the frame ends the message.</summary>
    None = 0,
    /// <summary>Do not block: fail with "would block" when the frame cannot be queued now.</summary>
    DontWait = 1,
    /// <summary>More frames of the same message follow; the message is delivered whole or not at all.</summary>
    SendMore = 2,
}
