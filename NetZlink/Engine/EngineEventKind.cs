// What an EngineEvent reports.
namespace NetZlink.Engine;

/// <summary>What an <see cref="EngineEvent"/> reports.</summary>
public enum EngineEventKind
{
    /// <summary>The connection is established: the application may write to it at once.</summary>
    Connected,

    /// <summary>One whole packet of the connection (header included), in a pooled buffer.</summary>
    Packet,

    /// <summary>An established connection ended (once per connection, on every path).</summary>
    Disconnected,

    /// <summary>
    /// Every attempt of a client connection failed; it will not be retried. With
    /// <see cref="EngineOptions.Reconnect"/> this also ends a connection whose reconnect rounds ran
    /// out (<see cref="ConnectFailure.Reconnects"/> above 0).
    /// </summary>
    ConnectFailed,

    /// <summary>
    /// A client connection that ended (<see cref="Disconnected"/>, with <see cref="ConnectionEndReason.Remote"/>
    /// or <see cref="ConnectionEndReason.IdleTimeout"/>) will be connected again under
    /// <see cref="EngineOptions.Reconnect"/>: round <see cref="EngineEvent.Attempt"/> starts after
    /// <see cref="EngineEvent.Delay"/>. A <see cref="Connected"/> (the same <see cref="Connection"/>),
    /// another Reconnecting or a final <see cref="ConnectFailed"/> follows.
    /// </summary>
    Reconnecting,
}
