// What an application plugs into a shard: callbacks on the shard's own thread.
namespace NetZlink.Engine;

/// <summary>
/// Receives a shard's events. One instance per shard (see <see cref="ClientEngine.Start"/>), every
/// method called on that shard's thread only, so implementations need no locks. Methods must not
/// block: the shard drives thousands of connections with this thread.
/// </summary>
public interface IConnectionHandler
{
    /// <summary>The connection is established and may send.</summary>
    void OnConnected(EngineShard shard, Connection connection);

    /// <summary>Every attempt to connect failed or timed out; the connection will not be retried.</summary>
    void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure);

    /// <summary>One whole packet, header included; the span is valid only during the call.</summary>
    void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet);

    /// <summary>
    /// With the default framer (<see cref="LengthPrefixFramer"/>): every whole packet one read of a
    /// connection brought, in order, headers included, each already checked against the framer's
    /// limits; the span is valid only during the call. Override it to handle the run at once (an
    /// echo sends it back with one <see cref="EngineShard.Send"/>); the engine then counts every
    /// packet of the run as received. Without an override the engine calls <see cref="OnPacket"/>
    /// for each packet and stops at one after which the connection has ended. Custom framers'
    /// packets always come through <see cref="OnPacket"/>.
    /// </summary>
    void OnPackets(EngineShard shard, Connection connection, ReadOnlySpan<byte> packets)
    {
        while (!packets.IsEmpty && shard.IsConnected(connection.Slot))
        {
            int length = LengthPrefixFramer.Size + (int)System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(packets);
            OnPacket(shard, connection, packets[..length]);
            packets = packets[length..];
        }
    }

    /// <summary>
    /// An established connection ended; <paramref name="lostBytes"/> is the partial packet a custom
    /// framer's reassembly dropped with it (0 with the default framer, whose partial packet is in the native library).
    /// </summary>
    void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes);

    /// <summary>
    /// A client connection that ended will be connected again (<see cref="EngineOptions.Reconnect"/>):
    /// round <paramref name="attempt"/> (from 1) starts after <paramref name="delay"/>. Then comes
    /// <see cref="OnConnected"/> for the same connection, another OnReconnecting, or a final
    /// <see cref="OnConnectFailed"/> when the policy gives up. The default does nothing.
    /// </summary>
    void OnReconnecting(EngineShard shard, Connection connection, int attempt, TimeSpan delay)
    {
    }

    /// <summary>
    /// Called once per pass of the shard loop, after received data was dispatched: the place to send.
    /// An idle shard makes a pass when something wakes it; <see cref="StreamEngine.RequestPass"/>
    /// asks for one from outside, <see cref="EngineShard.WakeBy"/> from a handler.
    /// </summary>
    void OnPass(EngineShard shard);
}
