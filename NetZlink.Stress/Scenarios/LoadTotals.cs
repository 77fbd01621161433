// The counters of a running client, summed over its shards (or connections) at one moment.
namespace NetZlink.Stress.Scenarios;

/// <summary>What the pass rules and the progress line read from a client stack.</summary>
/// <param name="PeerClosed">Established connections the server ended (closed or reset).</param>
/// <param name="ProtocolErrors">Connections closed because the server sent a length header other than the packet's.</param>
/// <param name="Lost">Packets outstanding on connections when they ended (a partial echo included): sent, never echoed.</param>
/// <param name="Late">Open model: measured packets sent after the inflight cap or a full send queue held them past their due time.</param>
/// <param name="Unsent">Open model, during the drain: measured packets due before the measured phase ended and not sent yet (open connections only).</param>
/// <param name="LastMeasuredEchoNs">Open model: when the last measured echo arrived (0: none did).</param>
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
    long BadEchoes,
    long PeerClosed = 0,
    long ProtocolErrors = 0,
    long Lost = 0,
    long Late = 0,
    long Unsent = 0,
    long LastMeasuredEchoNs = 0);
