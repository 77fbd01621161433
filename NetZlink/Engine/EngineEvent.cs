// One item of an EngineChannel's reader: a connection event or a packet in a pooled buffer.
using System.Buffers;
using System.IO.Pipelines;

namespace NetZlink.Engine;

/// <summary>
/// A connection event or a received packet, read from <see cref="EngineChannel.Reader"/>. A
/// <see cref="EngineEventKind.Packet"/> holds a buffer rented from <see cref="ArrayPool{T}.Shared"/>:
/// dispose the event when done with <see cref="Packet"/>. Only the first dispose of an event (or of
/// any copy of it) gives the buffer back; later ones do nothing, and reading <see cref="Packet"/>
/// after it throws <see cref="ObjectDisposedException"/>. Disposing an event of another kind does
/// nothing.
/// </summary>
public readonly struct EngineEvent : IDisposable
{
    private readonly EngineChannel? _owner;
    private readonly PacketLease? _lease;
    private readonly int _version;
    private readonly int _value;
    private readonly ConnectionEndReason _reason;
    private readonly ConnectFailure _failure;
    private readonly IDuplexPipe? _pipe;
    private readonly long _delayTicks;

    private EngineEvent(EngineEventKind kind, Connection connection, EngineChannel? owner, PacketLease? lease, int version, int value, ConnectionEndReason reason, ConnectFailure failure, IDuplexPipe? pipe = null, long delayTicks = 0)
    {
        _pipe = pipe;
        _delayTicks = delayTicks;
        Kind = kind;
        Connection = connection;
        _owner = owner;
        _lease = lease;
        _version = version;
        _value = value;
        _reason = reason;
        _failure = failure;
    }

    /// <summary>What happened.</summary>
    public EngineEventKind Kind { get; }

    /// <summary>The connection it happened to: write to it with <see cref="EngineChannel.TrySend"/> or <see cref="EngineChannel.SendAsync"/>.</summary>
    public Connection Connection { get; }

    /// <summary>The packet's bytes (header included) for <see cref="EngineEventKind.Packet"/>, empty otherwise; valid until <see cref="Dispose"/>.</summary>
    /// <exception cref="ObjectDisposedException">The packet was given back (this event or a copy of it was disposed).</exception>
    public ReadOnlySpan<byte> Packet => Kind == EngineEventKind.Packet ? Array().AsSpan(0, _value) : default;

    /// <summary>The packet's bytes as memory (for async code); valid until <see cref="Dispose"/>.</summary>
    /// <exception cref="ObjectDisposedException">The packet was given back (this event or a copy of it was disposed).</exception>
    public ReadOnlyMemory<byte> PacketMemory => Kind == EngineEventKind.Packet ? Array().AsMemory(0, _value) : default;

    /// <summary>Why the connection ended: set on <see cref="EngineEventKind.Disconnected"/> events, null on every other kind.</summary>
    public ConnectionEndReason? Reason => Kind == EngineEventKind.Disconnected ? _reason : null;

    /// <summary>Bytes of a partial packet a custom framer's reassembly lost with the connection (<see cref="EngineEventKind.Disconnected"/> only; 0 with the default framer).</summary>
    public int LostBytes => Kind == EngineEventKind.Disconnected ? _value : 0;

    /// <summary>How the connection's attempts ended: set on <see cref="EngineEventKind.ConnectFailed"/> events, null on every other kind.</summary>
    public ConnectFailure? Failure => Kind == EngineEventKind.ConnectFailed ? _failure : null;

    /// <summary>The reconnect round about to start, from 1 (<see cref="EngineEventKind.Reconnecting"/> only; 0 otherwise).</summary>
    public int Attempt => Kind == EngineEventKind.Reconnecting ? _value : 0;

    /// <summary>How long the engine waits before that round starts (<see cref="EngineEventKind.Reconnecting"/> only; zero otherwise).</summary>
    public TimeSpan Delay => Kind == EngineEventKind.Reconnecting ? new TimeSpan(_delayTicks) : TimeSpan.Zero;

    /// <summary>
    /// The connection as a pipe pair (<see cref="EngineEventKind.Connected"/> events of a channel
    /// with <see cref="EngineChannelOptions.ConnectionPipes"/>; null otherwise). Its input completes
    /// when the connection ends, after the bytes that arrived before.
    /// </summary>
    public IDuplexPipe? Pipe => _pipe;

    /// <summary>Gives a packet's buffer back to the pool; the first call (on this event or any copy) does, later ones do nothing.</summary>
    public void Dispose()
    {
        if (_lease is not null && _lease.TryReturn(_version))
        {
            _owner?.BufferReturned();
        }
    }

    /// <inheritdoc/>
    public override string ToString() => Kind switch
    {
        EngineEventKind.Packet => $"Packet {Connection} ({Plural.Of(_value, "byte")})",
        EngineEventKind.Disconnected => $"Disconnected {Connection} ({_reason}, {Plural.Of(_value, "byte")} lost)",
        EngineEventKind.ConnectFailed => $"ConnectFailed {Connection} ({_failure})",
        EngineEventKind.Reconnecting => $"Reconnecting {Connection} (round {_value} in {new TimeSpan(_delayTicks).TotalMilliseconds:0} ms)",
        _ => $"{Kind} {Connection}",
    };

    internal static EngineEvent Connected(Connection connection, IDuplexPipe? pipe) => new(EngineEventKind.Connected, connection, null, null, 0, 0, default, default, pipe);

    /// <summary>A packet event holding a copy of <paramref name="packet"/> in a pooled buffer.</summary>
    internal static EngineEvent ForPacket(Connection connection, EngineChannel owner, ReadOnlySpan<byte> packet)
    {
        PacketLease lease = PacketLease.Rent(packet.Length, out int version);
        packet.CopyTo(lease.ArrayFor(version));
        return new(EngineEventKind.Packet, connection, owner, lease, version, packet.Length, default, default);
    }

    internal static EngineEvent Disconnected(Connection connection, ConnectionEndReason reason, int lostBytes)
        => new(EngineEventKind.Disconnected, connection, null, null, 0, lostBytes, reason, default);

    internal static EngineEvent ConnectFailed(Connection connection, ConnectFailure failure)
        => new(EngineEventKind.ConnectFailed, connection, null, null, 0, 0, default, failure);

    internal static EngineEvent Reconnecting(Connection connection, int attempt, TimeSpan delay)
        => new(EngineEventKind.Reconnecting, connection, null, null, 0, attempt, default, default, null, delay.Ticks);

    private byte[] Array() =>
        _lease!.ArrayFor(_version) ?? throw new ObjectDisposedException(nameof(EngineEvent), $"The packet of {Connection} was already given back (this event, or a copy of it, was disposed).");
}
