// zlink_poll event bits, also the bits of the EVENTS socket option.
namespace NetZlink;

/// <summary>What a poll waits for, and what it found.</summary>
[Flags]
public enum PollEvents : short
{
    /// <summary>Nothing.</summary>
    None = 0,
    /// <summary>A message can be received (or a file descriptor is readable).</summary>
    PollIn = 1,
    /// <summary>A message can be sent without blocking (or a file descriptor is writable).</summary>
    PollOut = 2,
    /// <summary>An error condition on a file descriptor.</summary>
    PollErr = 4,
    /// <summary>Urgent data on a file descriptor.</summary>
    PollPri = 8,
}
