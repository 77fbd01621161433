// Why an established connection ended.
namespace NetZlink.Engine;

/// <summary>Why an established connection ended.</summary>
public enum ConnectionEndReason
{
    /// <summary>The peer closed it or the transport failed.</summary>
    Remote,

    /// <summary>The application asked for it (<see cref="EngineShard.Close"/>).</summary>
    Local,

    /// <summary>
    /// The peer sent bytes that the framer rejected, or (default framer) a header the native library
    /// refused: an empty body, or one longer than the largest (EMSGSIZE); the connection was closed.
    /// </summary>
    ProtocolError,

    /// <summary>The engine is shutting down.</summary>
    EngineStopped,

    /// <summary>
    /// The engine's context was disposed or shut down while the engine ran: every shard stopped by
    /// itself (see <see cref="StreamEngine.Fault"/>).
    /// </summary>
    ContextTerminated,

    /// <summary>
    /// The engine stopped because a handler callback threw or a shard failed: every connection of
    /// every shard ends with this reason, and <see cref="StreamEngine.Fault"/> holds the exception.
    /// </summary>
    EngineFault,

    /// <summary>
    /// The peer sent more bytes of packets not yet whole than the engine holds for it:
    /// <see cref="EngineOptions.ReceiveBudgetPerConnection"/> for the connection, or
    /// <see cref="EngineOptions.ReceiveBudgetPerShard"/> for its shard's connections together
    /// (docs/engine.md, "Receive memory"). The connection was closed; the engine runs on.
    /// </summary>
    ReceiveBudgetExceeded,

    /// <summary>
    /// Nothing arrived from the peer for <see cref="EngineOptions.IdleTimeout"/>: the engine took it
    /// for a dead or stalled peer and closed the connection. A client engine with
    /// <see cref="EngineOptions.Reconnect"/> reconnects it.
    /// </summary>
    IdleTimeout,
}
