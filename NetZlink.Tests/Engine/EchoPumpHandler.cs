// A handler that keeps traffic flowing for lifetime tests: every connection keeps Window packets
// in flight against an echo server (each echo is answered with a new packet), and the handler
// records how each connection ended, so a test can check that every live connection heard
// exactly one OnDisconnected, and with which reason, however the engine was torn down.
namespace NetZlink.Tests.Engine;

internal sealed class EchoPumpHandler : IConnectionHandler
{
    public const int Window = 4;
    public const int BodySize = 60;

    private static readonly int ReasonCount = Enum.GetValues<ConnectionEndReason>().Length;

    private readonly bool[] _live;
    private readonly long[] _endsByReason = new long[ReasonCount];
    private long _connected;
    private long _connectFailed;
    private long _packets;
    private long _unmatchedEnds;

    public EchoPumpHandler(EngineShard shard)
    {
        Shard = shard;
        _live = new bool[shard.SlotCount];
    }

    /// <summary>The shard this handler was made for (the test joins its thread).</summary>
    public EngineShard Shard { get; }

    public long Connected => Interlocked.Read(ref _connected);

    public long ConnectFailed => Interlocked.Read(ref _connectFailed);

    public long Packets => Interlocked.Read(ref _packets);

    /// <summary>OnDisconnected calls for a connection that was not live (twice, or never connected).</summary>
    public long UnmatchedEnds => Interlocked.Read(ref _unmatchedEnds);

    public long Ended(ConnectionEndReason reason) => Interlocked.Read(ref _endsByReason[(int)reason]);

    public long EndedTotal => Enumerable.Range(0, ReasonCount).Sum(r => Interlocked.Read(ref _endsByReason[r]));

    /// <summary>Connections that connected and have not heard OnDisconnected; read after the shard stopped.</summary>
    public int StillLive => _live.Count(l => l);

    public void OnConnected(EngineShard shard, Connection connection)
    {
        _live[connection.Slot] = true;
        Interlocked.Increment(ref _connected);
        for (int i = 0; i < Window; i++)
        {
            SendPacket(shard, connection);
        }
    }

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        => Interlocked.Increment(ref _connectFailed);

    public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
    {
        Interlocked.Increment(ref _packets);
        SendPacket(shard, connection);
    }

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
        if (!_live[connection.Slot])
        {
            Interlocked.Increment(ref _unmatchedEnds);
        }

        _live[connection.Slot] = false;
        Interlocked.Increment(ref _endsByReason[(int)reason]);
    }

    public void OnPass(EngineShard shard)
    {
    }

    private static void SendPacket(EngineShard shard, Connection connection)
    {
        Span<byte> packet = shard.SendScratch[..(4 + BodySize)];
        BinaryPrimitives.WriteUInt32BigEndian(packet, BodySize);
        packet[4..].Fill((byte)connection.Index);
        _ = shard.Send(connection, packet);
    }
}
