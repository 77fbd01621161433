// One event read from a Monitor, copied out of zlink_monitor_event_t.
using NetZlink.Interop;

namespace NetZlink;

/// <summary>One socket event reported by a <see cref="ZlinkMonitor"/>.</summary>
public readonly struct MonitorEvent
{
    internal unsafe MonitorEvent(ZlinkMonitorEvent* native, string? tlsFailure = null)
    {
        TlsFailure = tlsFailure;
        EventType = (MonitorEvents)native->Event;
        Value = native->Value;
        RoutingId = new RoutingId(native->RoutingId.AsSpan().ToArray());
        LocalAddress = Utf8Z.Decode(native->LocalAddress, 256);
        RemoteAddress = Utf8Z.Decode(native->RemoteAddress, 256);
    }

    /// <summary>What happened (one bit of <see cref="MonitorEvents"/>).</summary>
    public MonitorEvents EventType { get; }

    /// <summary>The event's value: a descriptor, an errno, an interval or a <see cref="DisconnectReason"/>, depending on <see cref="EventType"/>.</summary>
    public ulong Value { get; }

    /// <summary>The routing id of the connection concerned, when the library knows it (empty otherwise).</summary>
    public RoutingId RoutingId { get; }

    /// <summary>The local endpoint (empty when unknown).</summary>
    public string LocalAddress { get; }

    /// <summary>The remote endpoint (empty when unknown).</summary>
    public string RemoteAddress { get; }

    /// <summary>For a <see cref="MonitorEvents.Disconnected"/> event, why the connection ended (Unknown for other events or unlisted values).</summary>
    public DisconnectReason DisconnectReason =>
        EventType == MonitorEvents.Disconnected && Value <= (ulong)DisconnectReason.ContextTerminated
            ? (DisconnectReason)Value
            : DisconnectReason.Unknown;

    /// <summary>
    /// For a HandshakeFailed event of a STREAM socket's TLS connection, why it failed, e.g.
    /// <c>TLS: certificate has expired (X509 verify result 10)</c> (<see cref="ZlinkSocket.TlsLastError"/>
    /// and <see cref="ZlinkSocket.TlsLastVerifyResult"/>, read from the socket when the monitor reads the
    /// event: the event's own reason unless another handshake of that socket failed since). Null for
    /// other events, for a socket without TLS, and when the socket could not be asked (another thread
    /// was inside a call on it, or it was disposed).
    /// </summary>
    public string? TlsFailure { get; }

    /// <inheritdoc/>
    public override string ToString() =>
        $"{EventType} value={Value} local={LocalAddress} remote={RemoteAddress} id={RoutingId}" + (TlsFailure is null ? "" : $" {TlsFailure}");
}
