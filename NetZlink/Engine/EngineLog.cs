// What the engine tells a service operator through ILogger (EngineOptions.LoggerFactory): one
// source-generated method per event, each with a stable id (the table in docs/hosting.md).
// Nothing here writes anywhere else; without a logger factory the engine logs nothing.
using Microsoft.Extensions.Logging;

namespace NetZlink.Engine;

internal static partial class EngineLog
{
    /// <summary>The logger category of every engine event.</summary>
    internal const string Category = "NetZlink.Engine";

    [LoggerMessage(EventId = 1000, EventName = "EngineStarted", Level = LogLevel.Information,
        Message = "{Engine} started: {Kind}, {Shards} shards, endpoints {Endpoints}")]
    internal static partial void Started(ILogger logger, string engine, string kind, int shards, string endpoints);

    [LoggerMessage(EventId = 1001, EventName = "EngineStopped", Level = LogLevel.Information,
        Message = "{Engine} stopped: {Connected} connections established, {ConnectFailures} failed to connect, {Disconnects} ended, {DroppedSends} queued sends dropped")]
    internal static partial void Stopped(ILogger logger, string engine, long connected, long connectFailures, long disconnects, long droppedSends);

    [LoggerMessage(EventId = 1002, EventName = "EngineFaulted", Level = LogLevel.Error,
        Message = "{Engine} faulted on shard {Shard}: {Reason}; every shard stops and every connection ends with EngineFault")]
    internal static partial void Faulted(ILogger logger, Exception exception, string engine, int shard, string reason);

    [LoggerMessage(EventId = 1003, EventName = "ContextTerminated", Level = LogLevel.Warning,
        Message = "{Engine} stopped: its context was disposed or shut down while it ran; connections end with ContextTerminated")]
    internal static partial void ContextTerminated(ILogger logger, string engine);

    [LoggerMessage(EventId = 1004, EventName = "HandlerException", Level = LogLevel.Error,
        Message = "{Engine}: a connection handler threw on shard {Shard} ({ExceptionType}); the engine stops (EngineFault)")]
    internal static partial void HandlerThrew(ILogger logger, Exception exception, string engine, int shard, string exceptionType);

    [LoggerMessage(EventId = 1010, EventName = "ConnectAttemptFailed", Level = LogLevel.Debug,
        Message = "{Engine}: connect attempt {Attempt} of connection {Connection} to {Endpoint} failed: {Reason}; retrying in {RetryDelayMs} ms")]
    internal static partial void AttemptFailed(ILogger logger, string engine, int attempt, int connection, string endpoint, string reason, double retryDelayMs);

    [LoggerMessage(EventId = 1011, EventName = "ConnectGaveUp", Level = LogLevel.Warning,
        Message = "{Engine}: connection {Connection} to {Endpoint} failed after {Attempts} attempts: {Reason}{Permanent}; it is not retried again")]
    internal static partial void GaveUp(ILogger logger, string engine, int connection, string endpoint, int attempts, string reason, string permanent);

    [LoggerMessage(EventId = 1012, EventName = "Connected", Level = LogLevel.Debug,
        Message = "{Engine}: connection {Connection} established with {Endpoint}")]
    internal static partial void Connected(ILogger logger, string engine, int connection, string endpoint);

    [LoggerMessage(EventId = 1013, EventName = "Disconnected", Level = LogLevel.Information,
        Message = "{Engine}: connection {Connection} ({Endpoint}) ended by the peer or the transport")]
    internal static partial void Disconnected(ILogger logger, string engine, int connection, string endpoint);

    [LoggerMessage(EventId = 1014, EventName = "ProtocolError", Level = LogLevel.Warning,
        Message = "{Engine}: connection {Connection} ({Endpoint}) closed: the peer sent bytes the framer refuses")]
    internal static partial void ProtocolError(ILogger logger, string engine, int connection, string endpoint);

    [LoggerMessage(EventId = 1015, EventName = "AcceptRefused", Level = LogLevel.Warning,
        Message = "{Engine}: a connection to {Endpoint} was refused: shard {Shard} holds MaxConnections ({MaxConnections}) connections")]
    internal static partial void AcceptRefused(ILogger logger, string engine, string endpoint, int shard, int maxConnections);

    [LoggerMessage(EventId = 1016, EventName = "Reconnecting", Level = LogLevel.Debug,
        Message = "{Engine}: connection {Connection} to {Endpoint} is reconnecting: round {Round} in {DelayMs} ms")]
    internal static partial void Reconnecting(ILogger logger, string engine, int connection, string endpoint, int round, double delayMs);

    [LoggerMessage(EventId = 1017, EventName = "ReconnectGaveUp", Level = LogLevel.Warning,
        Message = "{Engine}: connection {Connection} to {Endpoint} could not be reconnected in {Rounds} rounds (the last: {Reason}); the engine gives up on it")]
    internal static partial void ReconnectGaveUp(ILogger logger, string engine, int connection, string endpoint, int rounds, string reason);

    [LoggerMessage(EventId = 1018, EventName = "IdleTimeout", Level = LogLevel.Information,
        Message = "{Engine}: connection {Connection} ({Endpoint}) closed: nothing received for {IdleMs} ms (IdleTimeout)")]
    internal static partial void IdleTimedOut(ILogger logger, string engine, int connection, string endpoint, double idleMs);

    [LoggerMessage(EventId = 1019, EventName = "Draining", Level = LogLevel.Information,
        Message = "{Engine} is draining: new posts are refused, held frames are flushed, then it stops (timeout {TimeoutMs} ms)")]
    internal static partial void Draining(ILogger logger, string engine, double timeoutMs);

    [LoggerMessage(EventId = 1020, EventName = "PostDropped", Level = LogLevel.Warning,
        Message = "{Engine}: a posted frame for connection {Connection} was dropped: the connection was not established or ended first")]
    internal static partial void PostDropped(ILogger logger, string engine, int connection);

    [LoggerMessage(EventId = 1021, EventName = "SlowPeer", Level = LogLevel.Warning,
        Message = "{Engine}: connection {Connection} ({Endpoint}) is not keeping up: its socket queue is at the high-water mark ({HighWaterMark} messages) and frames wait in the engine")]
    internal static partial void SlowPeer(ILogger logger, string engine, int connection, string endpoint, int highWaterMark);

    [LoggerMessage(EventId = 1022, EventName = "SendRefused", Level = LogLevel.Warning,
        Message = "{Engine}: a send to connection {Connection} ({Endpoint}) was refused (Full): {Bytes} bytes already wait for that peer (MaxPendingBytesPerConnection)")]
    internal static partial void SendRefused(ILogger logger, string engine, int connection, string endpoint, int bytes);

    [LoggerMessage(EventId = 1023, EventName = "ReceivePaused", Level = LogLevel.Warning,
        Message = "{Engine}: shard {Shard} stopped reading its connections: the application has not taken the packets it was given (a slow consumer); TCP holds the peers back meanwhile")]
    internal static partial void ReceivePaused(ILogger logger, string engine, int shard);

    [LoggerMessage(EventId = 1099, EventName = "LogsSuppressed", Level = LogLevel.Information,
        Message = "{Engine}: shard {Shard} left out {Count} {Event} messages in the last {WindowSeconds} s (at most {Limit} per window)")]
    internal static partial void Suppressed(ILogger logger, string engine, int shard, long count, string @event, int windowSeconds, int limit);
}
