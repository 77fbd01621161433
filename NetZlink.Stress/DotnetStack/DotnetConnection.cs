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
using NetZlink.Stress.Scenarios;

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

    // Receive path: the reassembler's partial packet.
    public PartialPacket Partial;

    // Send path (held by whoever owns SendBusy).
    public int SendBusy;
    public int Wanted;
    public byte[]? SendOverflow;

    /// <summary>Send fields: the SendBusy holder's; receive fields: the receive callback's; Outstanding: Interlocked.</summary>
    public EchoConnectionCounters Counters;
}
