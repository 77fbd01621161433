// An IConnectionHandler that records what a shard reports, for tests to assert on from the
// test thread (every list is locked: the shard thread writes, the test thread reads).
namespace NetZlink.Tests.Engine;

internal sealed class RecordingHandler : IConnectionHandler
{
    private readonly object _gate = new();
    private readonly List<byte[]> _packets = new();
    private readonly List<ConnectFailure> _failures = new();
    private readonly List<(ConnectionEndReason Reason, int LostBytes)> _disconnects = new();
    private readonly List<Connection> _connected = new();

    /// <summary>Frames to send from OnPass on the shard thread, one per pass.</summary>
    public System.Collections.Concurrent.ConcurrentQueue<byte[]> ToSend { get; } = new();

    public List<SendResult> SendResults { get; } = new();

    public List<byte[]> Packets { get { lock (_gate) { return _packets.ToList(); } } }

    public List<ConnectFailure> Failures { get { lock (_gate) { return _failures.ToList(); } } }

    public List<(ConnectionEndReason Reason, int LostBytes)> Disconnects { get { lock (_gate) { return _disconnects.ToList(); } } }

    public List<Connection> Connected { get { lock (_gate) { return _connected.ToList(); } } }

    public void OnConnected(EngineShard shard, Connection connection)
    {
        lock (_gate)
        {
            _connected.Add(connection);
        }
    }

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
    {
        lock (_gate)
        {
            _failures.Add(failure);
        }
    }

    public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
    {
        lock (_gate)
        {
            _packets.Add(packet.ToArray());
        }
    }

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
        lock (_gate)
        {
            _disconnects.Add((reason, lostBytes));
        }
    }

    private int _passes;

    /// <summary>How many times the shard has called OnPass.</summary>
    public int Passes => Volatile.Read(ref _passes);

    public void OnPass(EngineShard shard)
    {
        Interlocked.Increment(ref _passes);
        List<Connection> connected = Connected;
        if (connected.Count == 0)
        {
            return;
        }

        while (ToSend.TryDequeue(out byte[]? frame))
        {
            SendResult result = shard.Send(connected[0], frame);
            lock (_gate)
            {
                SendResults.Add(result);
            }
        }
    }

    public List<SendResult> SendResultsSnapshot()
    {
        lock (_gate)
        {
            return SendResults.ToList();
        }
    }
}
