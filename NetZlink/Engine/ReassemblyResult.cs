// What PacketReassembler.Feed did with one read.
namespace NetZlink.Engine;

/// <summary>What <see cref="PacketReassembler.Feed"/> did with one read.</summary>
internal enum ReassemblyResult
{
    /// <summary>Every byte was used: whole packets were delivered and the rest, if any, kept as a partial packet.</summary>
    Consumed,

    /// <summary>The sink asked to stop; the rest of the read was not looked at.</summary>
    Stopped,

    /// <summary>
    /// A header gave a length below the header size or above the maximum (or the framer said -1).
    /// Packets before it were delivered; the stream cannot be trusted past it, so the caller
    /// closes the connection and calls <see cref="PacketReassembler.Release"/>.
    /// </summary>
    ProtocolError,
}
