// Why a connection ended: the value of a Disconnected monitor event.
namespace NetZlink;

/// <summary>Why a connection ended (<see cref="MonitorEvent.Value"/> of a <see cref="MonitorEvents.Disconnected"/> event).</summary>
public enum DisconnectReason
{
    /// <summary>Not known.</summary>
    Unknown = 0,
    /// <summary>This side closed it.</summary>
    Local = 1,
    /// <summary>The peer closed it.</summary>
    Remote = 2,
    /// <summary>The handshake failed.</summary>
    HandshakeFailed = 3,
    /// <summary>A transport error.</summary>
    TransportError = 4,
    /// <summary>The context was terminated.</summary>
    ContextTerminated = 5,
}
