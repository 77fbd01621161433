// What a ShardPacer tells as it walks the schedule: a slot has a packet due. The shard's load code
// implements it and queues the slot for sending; the slot itself works out how many it owes.
namespace NetZlink.Stress.Scenarios;

/// <summary>Receives the slots that have packets newly due.</summary>
internal interface IDueSink
{
    /// <summary>A packet of <paramref name="slot"/> is due (or several: the slot works out how many).</summary>
    void OnDue(int slot);
}
