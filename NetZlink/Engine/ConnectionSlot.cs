// Per-connection state a shard keeps in one array: connect progress, receive reassembly (custom
// framers) and the send retry buffer. A struct, so 10,000 connections cost one allocation per shard.
namespace NetZlink.Engine;

internal struct ConnectionSlot
{
    /// <summary>
    /// Client: the routing id of the current attempt (generation in the top byte, slot below).
    /// Server: the id the socket gave the accepted connection.
    /// </summary>
    public uint RoutingId;

    /// <summary>The connection's <see cref="Connection.Index"/>: fixed for a client slot, new for each connection a server slot holds.</summary>
    public int Serial;
    /// <summary>Where the connection is; changed only by <see cref="Transition"/>.</summary>
    public readonly ConnectionState State => _state;

    private ConnectionState _state;
    public byte Generation;
    public bool InWaitList;
    public bool LastTimedOut;
    public int Attempts;
    public int LastErrno;

    /// <summary>
    /// The connection's generation: one more each time the slot's connection is established (a
    /// client's reconnects, a server slot's next connection). A posted frame carries the value it
    /// saw, and is sent only to that generation (read by posting threads: Volatile).
    /// </summary>
    public int Life;

    /// <summary>When the connection last received anything (Stopwatch ticks), for <see cref="EngineOptions.IdleTimeout"/>.</summary>
    public long LastReceiveTicks;

    /// <summary>Reconnect rounds since the connection was last established (0: not reconnecting).</summary>
    public int ReconnectRound;

    /// <summary>The span of the connect attempt in flight, when someone listens to the engine's ActivitySource.</summary>
    public System.Diagnostics.Activity? ConnectSpan;

    /// <summary>Connect deadline while Connecting, next attempt time while RetryWait (Stopwatch ticks).</summary>
    public long DeadlineTicks;

    /// <summary>A packet that spans reads, gathered by the shard's PacketReassembler (custom framers only: the default framer's packets are cut by the native library).</summary>
    public PartialPacket Partial;

    /// <summary>The bytes of <see cref="Partial"/> counted in the shard's receive budget.</summary>
    public int PartialCounted;

    /// <summary>Frames the socket refused (EAGAIN at SNDHWM), kept in order for the next passes.</summary>
    public byte[]? Pending;
    public int PendingLength;

    /// <summary>How much of <see cref="Pending"/> came from ClientEngine posts (they hold posting capacity until sent).</summary>
    public int PendingPostedBytes;
    public int PendingPostedFrames;

    /// <summary>
    /// The one way <see cref="State"/> changes: asserts (debug builds) that the table in
    /// <see cref="ConnectionStates.IsAllowed"/> allows going from the current state to <paramref name="to"/>.
    /// </summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    public void Transition(ConnectionState to)
    {
        System.Diagnostics.Debug.Assert(ConnectionStates.IsAllowed(_state, to), $"connection state {_state} -> {to} is not an allowed transition");
        _state = to;
    }

    /// <summary>Posted frames the native socket took for this connection's current life (the most its native queue can still hold of them, with SNDHWM).</summary>
    public long PostsSentLive;

    /// <summary>The drain asked the native socket to close this connection after its output (EngineShard.Lifecycle.cs).</summary>
    public bool DrainClosing;

    /// <summary>Its drain close ended with everything written and the peer's end (the 0x00's cause 0).</summary>
    public bool DrainFlushed;
}
