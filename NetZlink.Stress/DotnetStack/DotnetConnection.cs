// The per-connection state of the dotnet client, kept in one struct array per shard and reached
// by slot index from the socket event args. Who may touch which field:
//   - connect fields: the shard thread while Idle/RetryWait, the connect completion otherwise
//     (State changes by compare-and-swap decide the hand-over);
//   - receive fields: the receive path only, and it runs one callback at a time per connection
//     (one zero-byte receive outstanding), so plain fields;
//   - send fields: only the thread that holds SendBusy (taken by compare-and-swap), so plain fields;
//   - Outstanding is shared by both paths: Interlocked only.
// The runner sums the plain counters with Volatile.Read while the run goes on.

using System.Net.Sockets;
using NetZlink.Engine;

namespace NetZlink.Stress.DotnetStack;

/// <summary>One client connection's state.</summary>
internal struct DotnetConnection
{
    // Connect (see DotnetConnectionState for the hand-over).
    public Socket? Socket;
    public int State;
    public int Attempts;
    public long DeadlineTicks;
    public bool InWaitList;
    /// <summary>The errno of the last failed attempt (110 when it timed out).</summary>
    public int LastErrno;

    // Receive path.
    public PartialPacket Partial;
    public long ReceivedTotal;
    public long ReceivedMeasured;
    public long GatingViolations;
    public long BadEchoes;
    /// <summary>Echoes whose length header was not the packet's (the connection is then closed).</summary>
    public long ProtocolErrors;
    /// <summary>Open model: when the last measured echo arrived (ns).</summary>
    public long LastMeasuredEchoNs;

    // Send path (held by whoever owns SendBusy).
    public int SendBusy;
    public int Wanted;
    public long Requested;
    public long SentTotal;
    public long SentMeasured;
    public byte[]? SendOverflow;
    /// <summary>Open model: the schedule ScheduledSent counts against (a new phase's schedule restarts it).</summary>
    public Scenarios.OpenSchedule? Schedule;
    /// <summary>Open model: packets of <see cref="Schedule"/> sent (written with release after Outstanding grew).</summary>
    public long ScheduledSent;
    /// <summary>Open model: the cap or a pending send held back packets that were due; what goes next is late.</summary>
    public bool Blocked;
    /// <summary>Open model: measured packets sent late (see Blocked).</summary>
    public long Late;

    /// <summary>Packets sent (or about to be) and not yet echoed.</summary>
    public int Outstanding;
}
