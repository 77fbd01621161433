// ZlinkContext options (zlink_ctx_set / zlink_ctx_get), with the ABI's numbers.
using System.Diagnostics.CodeAnalysis;

namespace NetZlink;

/// <summary>An option of a <see cref="ZlinkContext"/>; all are integers.</summary>
[SuppressMessage("Design", "CA1069:Enums values should not be duplicated", Justification = "The ABI itself gives SOCKET_LIMIT and THREAD_PRIORITY the same number (one is read-only, the other write-only).")]
public enum ContextOption
{
    /// <summary>Number of I/O threads (default 2); set before the first socket.</summary>
    IoThreads = 1,
    /// <summary>Maximum number of sockets (default 1023).</summary>
    MaxSockets = 2,
    /// <summary>Largest value MaxSockets accepts (read-only).</summary>
    SocketLimit = 3,
    /// <summary>Scheduling priority of the I/O threads (write-only, same number as SocketLimit).</summary>
    ThreadPriority = 3,
    /// <summary>Scheduling policy of the I/O threads.</summary>
    ThreadSchedPolicy = 4,
    /// <summary>Largest message size the context accepts.</summary>
    MaxMessageSize = 5,
    /// <summary>Size of zlink_msg_t in bytes (read-only, 64).</summary>
    MessageStructSize = 6,
    /// <summary>Adds a CPU to the I/O threads' affinity set.</summary>
    ThreadAffinityCpuAdd = 7,
    /// <summary>Removes a CPU from the I/O threads' affinity set.</summary>
    ThreadAffinityCpuRemove = 8,
    /// <summary>Numeric prefix of the I/O threads' names.</summary>
    ThreadNamePrefix = 9,
}
