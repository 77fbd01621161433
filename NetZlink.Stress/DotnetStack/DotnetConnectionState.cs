// The life of one dotnet-stack client connection. Stored as an int in DotnetConnection.State and
// changed only through DotnetClientShard.Transition (a compare-and-swap), because the shard thread
// (attempts, timeouts, retries) and the runtime's completion threads (connect results, errors)
// both move it:
//
//   Idle ─────────────┐
//   RetryWait ──delay──┴─▶ Connecting ──completed ok──────────────▶ Connected ──error, EOF, stop──▶ Closed
//                            │    │
//                            │    └──deadline──▶ TimingOut ──completed (aborted)──┐
//                            └──completed with an error──────────────────────────┴─▶ RetryWait (attempts left)
//                                                                                  └─▶ Failed (none left)
//
// Only an attempt's completion moves it on to Connected, RetryWait or Failed (a deadline just marks it
// TimingOut and closes its socket), so the attempt's socket event args are never reused while the
// runtime still holds them.
namespace NetZlink.Stress.DotnetStack;

/// <summary>Where a client connection is in its life.</summary>
internal enum DotnetConnectionState
{
    /// <summary>No attempt made yet.</summary>
    Idle,

    /// <summary>A connect is in flight.</summary>
    Connecting,

    /// <summary>The connect passed its deadline; its socket is closed and its completion is awaited.</summary>
    TimingOut,

    /// <summary>The last attempt failed; the next starts after the retry delay.</summary>
    RetryWait,

    /// <summary>Connected: receiving, and sending while the plan's phase sends.</summary>
    Connected,

    /// <summary>Every attempt failed or timed out.</summary>
    Failed,

    /// <summary>Was connected, and is no longer (peer closed, error, or the run stopped).</summary>
    Closed,
}
