// The states of one engine connection. Transitions (all on the owning shard's thread):
//   Idle -> Connecting            an attempt starts (zlink_connect with CONNECT_ROUTING_ID)
//   Connecting -> Connected       the socket delivers [id][0x01]
//   Connecting -> RetryWait       [id][0x00], a native connect error, or the attempt's deadline
//   RetryWait -> Connecting       the retry delay passed and an attempt slot is free
//   Connecting/RetryWait -> Failed  no retries left (final)
//   Connected -> Closed           [id][0x00] (peer), Close (local), protocol error, engine stop
//   Closed -> RetryWait           a client's reconnect round is scheduled (EngineOptions.Reconnect)
//   Idle/Closed -> Connected      a server slot takes an accepted connection (slots are reused)
// ConnectionSlot.Transition is the only way a state changes; it asserts this table (IsAllowed).
namespace NetZlink.Engine;

internal enum ConnectionState : byte
{
    Idle,
    Connecting,
    RetryWait,
    Connected,
    Failed,
    Closed,
}

/// <summary>The allowed transitions of <see cref="ConnectionState"/> (the table in the comment above).</summary>
internal static class ConnectionStates
{
    /// <summary>True when a slot may go from <paramref name="from"/> to <paramref name="to"/>.</summary>
    public static bool IsAllowed(ConnectionState from, ConnectionState to) => (from, to) switch
    {
        (ConnectionState.Idle, ConnectionState.Connecting) => true,
        (ConnectionState.Idle, ConnectionState.Connected) => true,
        (ConnectionState.Connecting, ConnectionState.Connected) => true,
        (ConnectionState.Connecting, ConnectionState.RetryWait) => true,
        (ConnectionState.Connecting, ConnectionState.Failed) => true,
        (ConnectionState.RetryWait, ConnectionState.Connecting) => true,
        (ConnectionState.RetryWait, ConnectionState.Failed) => true,
        (ConnectionState.Connected, ConnectionState.Closed) => true,
        (ConnectionState.Closed, ConnectionState.RetryWait) => true,
        (ConnectionState.Closed, ConnectionState.Connected) => true,
        _ => false,
    };
}
