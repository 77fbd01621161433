// The fail_reason= words: one machine-readable cause per run, the first that applies in the order
// below (a cause earlier in the list usually explains the later ones: a closed server also leaves
// packets lost), while reason="…" keeps the full human text of every cause.
namespace NetZlink.Stress.Scenarios;

/// <summary>Values of the fail_reason field.</summary>
public static class FailReasons
{
    /// <summary>PASS (or SKIP): nothing failed.</summary>
    public const string None = "none";

    /// <summary>Ctrl+C or SIGTERM ended the run early.</summary>
    public const string Interrupted = "interrupted";

    /// <summary>The client stack itself stopped mid-run (its context was terminated, or a shard failed).</summary>
    public const string ClientStopped = "client_stopped";

    /// <summary>Connections failed for good (refused, unreachable; errno in errors_by_errno).</summary>
    public const string ConnectFail = "connect_fail";

    /// <summary>Connections timed out for good, and none failed otherwise.</summary>
    public const string ConnectTimeout = "connect_timeout";

    /// <summary>The server sent a length header other than the packet size; those connections were closed.</summary>
    public const string ProtocolError = "protocol_error";

    /// <summary>The server closed or reset established connections (crashed, killed, cut a packet).</summary>
    public const string ServerClosed = "server_closed";

    /// <summary>Packets were still outstanding when the drain deadline passed.</summary>
    public const string DrainTimeout = "drain_timeout";

    /// <summary>An echo's bytes differed from what was sent (s0 checks every byte).</summary>
    public const string BadEcho = "bad_echo";

    /// <summary>An echo arrived when nothing was outstanding.</summary>
    public const string GatingViolation = "gating_violation";

    /// <summary>No measured echo came back at all.</summary>
    public const string NoEcho = "no_echo";

    /// <summary>Packets were sent and never echoed, with no other cause above.</summary>
    public const string Lost = "lost";

    /// <summary>incomplete_ratio above 0.01.</summary>
    public const string Incomplete = "incomplete";
}
