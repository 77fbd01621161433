// One line of progress, reported about once a second while a run is going.
namespace NetZlink.Stress.Scenarios;

/// <summary>A point-in-time view of a running scenario for the progress line.</summary>
/// <param name="StartsInSeconds">While waiting for --start-at (phase "wait"): seconds left; otherwise null.</param>
public readonly record struct ProgressSnapshot(
    string Phase,
    long Connections,
    double SentPerSecond,
    double ReceivedPerSecond,
    long InFlight,
    double P99UsSoFar,
    double RssMb = 0,
    double GcHeapMb = 0,
    double? StartsInSeconds = null);
