// The phases of a client run, in order. The runner moves the plan through them; each shard's
// handler notices the change on its next pass.
namespace NetZlink.Stress.Scenarios;

internal enum LoadPhase
{
    /// <summary>Connecting; nothing is sent.</summary>
    Connect,

    /// <summary>Sending unmeasured (phase byte 0) packets.</summary>
    Warmup,

    /// <summary>Not sending; waiting for the warm-up packets to come back.</summary>
    Settle,

    /// <summary>Sending measured (phase byte 1) packets.</summary>
    Measure,

    /// <summary>Not sending; waiting for every measured packet to come back.</summary>
    Drain,

    /// <summary>Finished; counters are final.</summary>
    Done,
}
