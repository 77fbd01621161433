// The ready-made handler for applications that would rather read packets than write callbacks:
// every packet is copied into a pooled buffer and written to one channel shared by all shards.
using System.Buffers;
using System.Threading.Channels;

namespace NetZlink.Engine;

/// <summary>
/// Delivers every received packet to <see cref="Reader"/>. Create one and pass
/// <see cref="CreateShardHandler"/> to <see cref="ClientEngine.Start"/>. The channel is bounded:
/// when the reader falls behind by <c>capacity</c> packets, further packets are dropped and counted
/// in <see cref="Dropped"/> rather than stalling every connection of the shard.
/// </summary>
public sealed class ChannelConnectionHandler
{
    private readonly Channel<ReceivedPacket> _channel;
    private long _dropped;
    private long _connected;
    private long _failed;

    /// <summary>Creates the handler with a channel of <paramref name="capacity"/> packets.</summary>
    public ChannelConnectionHandler(int capacity = 65536)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        _channel = Channel.CreateBounded<ReceivedPacket>(new BoundedChannelOptions(capacity)
        {
            SingleReader = false,
            SingleWriter = false,
            FullMode = BoundedChannelFullMode.Wait,
        });
    }

    /// <summary>Received packets, in arrival order per connection.</summary>
    public ChannelReader<ReceivedPacket> Reader => _channel.Reader;

    /// <summary>Packets dropped because the reader was <c>capacity</c> packets behind.</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>Connections established so far.</summary>
    public long Connected => Interlocked.Read(ref _connected);

    /// <summary>Connections whose every attempt failed.</summary>
    public long Failed => Interlocked.Read(ref _failed);

    /// <summary>The factory to give <see cref="ClientEngine.Start"/>.</summary>
    public IConnectionHandler CreateShardHandler(EngineShard shard) => new ShardHandler(this);

    /// <summary>Marks the channel complete (call after the engine stopped).</summary>
    public void Complete() => _channel.Writer.TryComplete();

    private sealed class ShardHandler(ChannelConnectionHandler owner) : IConnectionHandler
    {
        public void OnConnected(EngineShard shard, Connection connection) => Interlocked.Increment(ref owner._connected);

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure) => Interlocked.Increment(ref owner._failed);

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(packet.Length);
            packet.CopyTo(buffer);
            if (!owner._channel.Writer.TryWrite(new ReceivedPacket(connection, buffer, packet.Length)))
            {
                ArrayPool<byte>.Shared.Return(buffer);
                Interlocked.Increment(ref owner._dropped);
            }
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }
}
