// How the engine finds packet boundaries in a TCP byte stream.
namespace NetZlink.Engine;

/// <summary>
/// Cuts packets out of a byte stream. The engine calls it with the first <see cref="HeaderSize"/>
/// bytes of a packet and reassembles the rest, across reads, before handing the whole packet on
/// (over the native RAW framing, which needs NetZlink's library). <see cref="LengthPrefixFramer"/>,
/// the default, is different: the native library cuts its packets (see docs/engine.md, "The native framing").
/// </summary>
public interface IPacketFramer
{
    /// <summary>Bytes needed to know a packet's length.</summary>
    int HeaderSize { get; }

    /// <summary>
    /// The whole packet's length, header included, from its first <see cref="HeaderSize"/> bytes;
    /// -1 when the header is invalid (the connection is then closed as a protocol error).
    /// </summary>
    int GetPacketLength(ReadOnlySpan<byte> header);
}
