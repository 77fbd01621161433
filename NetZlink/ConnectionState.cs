// The states a socket's connections go through, as ZlinkSocket.WatchConnections reports them.
namespace NetZlink;

/// <summary>Where one connection (or connect endpoint) of a socket stands; see <see cref="ZlinkSocket.WatchConnections"/>.</summary>
public enum ConnectionState
{
    /// <summary>A connect to the endpoint is under way (the monitor's ConnectDelayed).</summary>
    Connecting = 0,
    /// <summary>The connection finished its handshake and carries messages (the monitor's ConnectionReady).</summary>
    Connected = 1,
    /// <summary>The connection ended; <see cref="ConnectionStateChange.Reason"/> says why (the monitor's Disconnected).</summary>
    Disconnected = 2,
    /// <summary>A connect failed or a connection was lost and is tried again later (the monitor's ConnectRetried).</summary>
    Retrying = 3,
    /// <summary>The watch ended: the socket or its context was closed, or the watcher disposed. The last change reported.</summary>
    Closed = 4,
}
