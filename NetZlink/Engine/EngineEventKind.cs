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

    /// <summary>Every attempt of a client connection failed; it will not be retried.</summary>
    ConnectFailed,
}
