// An IConnectionHandler that asks its shard to wake at set times (EngineShard.WakeBy) and records
// how late past each time the shard's next pass came, for the test thread to read.
namespace NetZlink.Tests.Engine;

internal sealed class PacingHandler(TimeSpan interval, int deadlines) : IConnectionHandler
{
    private readonly long _intervalTicks = (long)(interval.TotalSeconds * Stopwatch.Frequency);
    private readonly List<TimeSpan> _lateness = [];
    private long _target;
    private volatile bool _connected;

    /// <summary>How long after each wake-up time the pass came; complete once it has <c>deadlines</c> entries.</summary>
    public List<TimeSpan> Lateness
    {
        get
        {
            lock (_lateness)
            {
                return [.. _lateness];
            }
        }
    }

    public void OnConnected(EngineShard shard, Connection connection) => _connected = true;

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
    {
    }

    public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
    {
    }

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
    }

    public void OnPass(EngineShard shard)
    {
        if (!_connected)
        {
            return;
        }

        long now = Stopwatch.GetTimestamp();
        lock (_lateness)
        {
            if (_lateness.Count >= deadlines)
            {
                return;
            }

            if (_target != 0 && now >= _target)
            {
                _lateness.Add(Stopwatch.GetElapsedTime(_target, now));
                _target = 0;
            }

            if (_target == 0)
            {
                _target = now + _intervalTicks;
            }
        }

        shard.WakeBy(_target);
    }
}
