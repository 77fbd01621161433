// One change of a connection's state, made from one monitor event by ZlinkConnectionWatcher.
namespace NetZlink;

/// <summary>A connection of a socket changed state; reported by <see cref="ZlinkConnectionWatcher"/>.</summary>
public readonly struct ConnectionStateChange
{
    internal ConnectionStateChange(ConnectionState state, in MonitorEvent monitorEvent, string? handshakeFailure)
    {
        State = state;
        Event = monitorEvent;
        HandshakeFailure = handshakeFailure;
    }

    /// <summary>The new state.</summary>
    public ConnectionState State { get; }

    /// <summary>
    /// The connection the change is about: the endpoint given to <see cref="ZlinkSocket.Connect(string)"/> for a
    /// connection this socket made, the peer's address (e.g. <c>tcp://127.0.0.1:40312</c>) for one it
    /// accepted; empty for <see cref="ConnectionState.Closed"/>.
    /// </summary>
    public string Endpoint => !string.IsNullOrEmpty(Event.RemoteAddress) ? Event.RemoteAddress : Event.LocalAddress ?? "";

    /// <summary>The peer's routing id on Connected and Disconnected changes when the library knows it (empty otherwise).</summary>
    public RoutingId RoutingId => Event.RoutingId;

    /// <summary>
    /// For <see cref="ConnectionState.Disconnected"/>, why the connection ended (the monitor's
    /// DISCONNECTED reason); <see cref="DisconnectReason.Unknown"/> for other states.
    /// </summary>
    public DisconnectReason Reason => State == ConnectionState.Disconnected ? Event.DisconnectReason : DisconnectReason.Unknown;

    /// <summary>
    /// For <see cref="ConnectionState.Disconnected"/> after a failed handshake on that connection: which
    /// failure the monitor reported, e.g. <c>HandshakeFailedNoDetail errno 110</c> or, for TLS, the
    /// reason read from the socket (<see cref="MonitorEvent.TlsFailure"/>); null otherwise.
    /// </summary>
    public string? HandshakeFailure { get; }

    /// <summary>
    /// For <see cref="ConnectionState.Retrying"/> the monitor's value: the next retry's interval in ms on
    /// the ZMP socket types, the errno of the failed attempt on STREAM. 0 for other states.
    /// </summary>
    public long RetryValue => State == ConnectionState.Retrying ? (long)Event.Value : 0;

    /// <summary>The monitor event the change was made from (default for a <see cref="ConnectionState.Closed"/> made by the watcher).</summary>
    public MonitorEvent Event { get; }

    /// <inheritdoc/>
    public override string ToString() => State switch
    {
        ConnectionState.Disconnected => $"{State} {Endpoint} reason={Reason}" + (HandshakeFailure is null ? "" : $" ({HandshakeFailure})"),
        ConnectionState.Retrying => $"{State} {Endpoint} value={RetryValue}",
        ConnectionState.Closed => "Closed",
        _ => $"{State} {Endpoint}",
    };
}
