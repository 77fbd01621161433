// Monitor event bits: the mask given to Socket.OpenMonitor, and the type of each MonitorEvent.
namespace NetZlink;

/// <summary>Socket events a <see cref="ZlinkMonitor"/> reports; a mask when opening, one bit per received event.</summary>
[Flags]
public enum MonitorEvents
{
    /// <summary>No event.</summary>
    None = 0,
    /// <summary>A connection was established (<see cref="MonitorEvent.Value"/> is the descriptor).</summary>
    Connected = 0x1,
    /// <summary>A connect is in progress.</summary>
    ConnectDelayed = 0x2,
    /// <summary>A connect is being retried (<see cref="MonitorEvent.Value"/> is the interval in ms).</summary>
    ConnectRetried = 0x4,
    /// <summary>The socket listens on an endpoint.</summary>
    Listening = 0x8,
    /// <summary>A bind failed (<see cref="MonitorEvent.Value"/> is the errno).</summary>
    BindFailed = 0x10,
    /// <summary>A connection was accepted.</summary>
    Accepted = 0x20,
    /// <summary>An accept failed (<see cref="MonitorEvent.Value"/> is the errno).</summary>
    AcceptFailed = 0x40,
    /// <summary>A listening or connected descriptor was closed.</summary>
    Closed = 0x80,
    /// <summary>Closing a descriptor failed.</summary>
    CloseFailed = 0x100,
    /// <summary>A connection ended (<see cref="MonitorEvent.Value"/> is a <see cref="DisconnectReason"/>).</summary>
    Disconnected = 0x200,
    /// <summary>The monitor stopped; no more events follow.</summary>
    MonitorStopped = 0x400,
    /// <summary>A handshake failed without more detail.</summary>
    HandshakeFailedNoDetail = 0x800,
    /// <summary>A connection finished its handshake and carries messages.</summary>
    ConnectionReady = 0x1000,
    /// <summary>A handshake failed on a protocol error.</summary>
    HandshakeFailedProtocol = 0x2000,
    /// <summary>A handshake failed on authentication.</summary>
    HandshakeFailedAuth = 0x4000,
    /// <summary>Every event.</summary>
    All = 0xFFFF,
}
