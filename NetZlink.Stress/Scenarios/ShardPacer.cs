// One shard's walk along an OpenSchedule: which of its connections got a packet due since it last
// looked, and when its next packet is due (how long an idle shard may sleep). Both client stacks
// spread connections the same way: global connection k = slot * shards + shard index, so a shard's
// packets in due order are (round j, slot 0..slots-1) for j = 0, 1, … — a cursor over positions
// p = j * slots + slot. Looking costs O(packets that fell due), never O(connections), except when
// a whole round or more fell due at once (a stalled shard), where every slot is due anyway.
//
// Used on one thread only (the shard's), so it keeps plain fields.
namespace NetZlink.Stress.Scenarios;

/// <summary>Per-shard progress through the current <see cref="OpenSchedule"/>.</summary>
internal sealed class ShardPacer
{
    private readonly int _shardIndex;
    private readonly int _shardCount;
    private readonly int _slots;
    private OpenSchedule? _schedule;
    private long _position;
    private long _endPosition;

    public ShardPacer(int shardIndex, int shardCount, int slots)
    {
        _shardIndex = shardIndex;
        _shardCount = shardCount;
        _slots = slots;
    }

    /// <summary>The schedule being walked; null before the first sending phase.</summary>
    public OpenSchedule? Schedule => _schedule;

    /// <summary>The global connection index of <paramref name="slot"/>.</summary>
    public int ConnectionOf(int slot) => (slot * _shardCount) + _shardIndex;

    /// <summary>Starts walking <paramref name="schedule"/> from its first packet.</summary>
    public void Begin(OpenSchedule schedule)
    {
        _schedule = schedule;
        _position = 0;
        _endPosition = PositionsAmong(schedule.PacketsInPhase);
    }

    /// <summary>
    /// Tells <paramref name="sink"/> of every slot whose packet fell due by <paramref name="nowNs"/>
    /// since the last call; returns when this shard's next packet is due (ns), or long.MaxValue when
    /// the phase has no more.
    /// </summary>
    public long Advance(long nowNs, IDueSink sink)
    {
        if (_schedule is not { } schedule)
        {
            return long.MaxValue;
        }

        long reached = Math.Min(PositionsAmong(schedule.DueCount(nowNs)), _endPosition);
        if (reached - _position >= _slots)
        {
            for (int slot = 0; slot < _slots; slot++)
            {
                sink.OnDue(slot);
            }
        }
        else
        {
            for (long p = _position; p < reached; p++)
            {
                sink.OnDue((int)(p % _slots));
            }
        }

        _position = Math.Max(_position, reached);
        if (_position >= _endPosition)
        {
            return long.MaxValue;
        }

        long round = _position / _slots;
        int next = (int)(_position % _slots);
        return schedule.DueAtNs(ConnectionOf(next), round);
    }

    /// <summary>How many of this shard's positions are among the phase's first <paramref name="count"/> packets.</summary>
    private long PositionsAmong(long count)
    {
        int ccu = _schedule!.Connections;
        long rounds = count / ccu;
        long rest = count % ccu;
        // In the partial round, the connections k < rest are due: k = slot * shards + index.
        long partial = rest > _shardIndex ? ((rest - _shardIndex - 1) / _shardCount) + 1 : 0;
        return (rounds * _slots) + Math.Min(partial, _slots);
    }
}
