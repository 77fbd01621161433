// No framing: bytes handed on as they arrive.
namespace NetZlink.Engine;

/// <summary>
/// A framer that cuts nothing: with it as <see cref="EngineOptions.Framer"/>, a handler's
/// <see cref="IConnectionHandler.OnPacket"/> receives each read of a connection's byte stream as
/// it arrives (any length, one byte too, nothing held back: the native RAW framing), for protocols
/// the handler parses itself or byte-stream relays. Needs NetZlink's library (a zlink 1.3 build has
/// no RAW framing; the engine's Start then throws <see cref="ZlinkNotSupportedException"/>).
/// </summary>
public sealed class RawStreamFramer : IPacketFramer
{
    private RawStreamFramer()
    {
    }

    /// <summary>The one instance.</summary>
    public static RawStreamFramer Instance { get; } = new();

    /// <inheritdoc/>
    public int HeaderSize => 0;

    /// <inheritdoc/>
    public int GetPacketLength(ReadOnlySpan<byte> header) => -1;
}
