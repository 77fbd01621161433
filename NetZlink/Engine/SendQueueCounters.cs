// What happened to the frames other threads posted to an engine.
namespace NetZlink.Engine;

/// <summary>
/// A snapshot of an engine's posting counters, summed over shards (see
/// <see cref="StreamEngine.TrySend"/>). Once the engine has stopped,
/// <c>Accepted == Sent + DroppedClosed + DroppedStopped + DroppedDrainDeadline</c> and <c>BytesHeld == 0</c>; while it runs
/// the difference is what is still queued or waiting at a high-water mark.
/// </summary>
/// <param name="Accepted">Frames TrySend/SendAsync accepted.</param>
/// <param name="Sent">Accepted frames the native socket took (after a drain: only those of connections whose drain close ended with everything out, or that ended before the drain).</param>
/// <param name="DroppedClosed">Accepted frames dropped because their connection was not established when their turn came, or ended before they went out; during a drain also frames counted sent whose connection then ended other than by the drain's clean close.</param>
/// <param name="DroppedStopped">Accepted frames dropped because the engine stopped (stop, fault or context termination) while it still held them.</param>
/// <param name="BytesHeld">Bytes of accepted frames not yet sent or dropped (the posting capacity in use).</param>
public readonly record struct SendQueueCounters(long Accepted, long Sent, long DroppedClosed, long DroppedStopped, long BytesHeld)
{
    /// <summary>
    /// Accepted frames dropped because a <see cref="StreamEngine.DrainAsync"/> deadline passed while
    /// the engine still held them. With it, once the engine has stopped,
    /// <c>Accepted == Sent + DroppedClosed + DroppedStopped + DroppedDrainDeadline</c>.
    /// </summary>
    public long DroppedDrainDeadline { get; init; }

    /// <summary>Frames refused (TrySend and SendAsync returned false, nothing accepted) because the engine was draining (<see cref="StreamEngine.DrainAsync"/>).</summary>
    public long RefusedDraining { get; init; }
}
