// No framing: bytes handed on as they arrive.
namespace NetZlink.Engine;

/// <summary>
/// A framer that cuts nothing: with it as <see cref="EngineOptions.Framer"/>, a handler's
/// <see cref="IConnectionHandler.OnPacket"/> receives each read of a connection's byte stream as
/// it arrives (any length, no reassembly; a read of exactly one byte is held by the STREAM socket
/// until the connection's next read), for protocols the handler parses itself or byte-stream
/// relays such as an echo server.
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
