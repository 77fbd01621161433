// Where PacketReassembler hands whole packets. Implemented by structs so that the generic
// Feed<TSink> is compiled once per sink and the call is direct (no interface dispatch, no boxing).
namespace NetZlink.Engine;

/// <summary>Where <see cref="PacketReassembler"/> hands whole packets; implement it on a struct so the call is direct.</summary>
internal interface IPacketSink
{
    /// <summary>One whole packet, header included, valid only during the call.</summary>
    /// <returns>False to stop feeding: the stream ended during the call (e.g. the handler closed the connection).</returns>
    bool OnPacket(ReadOnlySpan<byte> packet);
}
