// The outcome of EngineShard.Send: never an exception on the hot path.
namespace NetZlink.Engine;

/// <summary>What happened to a frame given to <see cref="EngineShard.Send"/>.</summary>
public enum SendResult
{
    /// <summary>The native socket took the whole frame.</summary>
    Sent,

    /// <summary>The socket queue was full; the engine holds the frame and retries it on later passes, in order.</summary>
    Queued,

    /// <summary>The connection's retry queue is over its limit: nothing was taken; try later.</summary>
    Full,

    /// <summary>The connection is not (or no longer) established: nothing was taken.</summary>
    Closed,
}
