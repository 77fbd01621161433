// The counters of a running client, summed over its shards (or connections) at one moment.
namespace NetZlink.Stress.Scenarios;

/// <summary>What the pass rules and the progress line read from a client stack.</summary>
internal readonly record struct LoadTotals(
    long Connected,
    long ConnectFailed,
    long ConnectTimedOut,
    long Disconnected,
    long SentTotal,
    long ReceivedTotal,
    long SentMeasured,
    long ReceivedMeasured,
    long InFlight,
    long GatingViolations,
    long BadEchoes);
