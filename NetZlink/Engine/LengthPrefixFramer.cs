// The reference packet (docs/scenarios.md): [u32 big-endian body length][body].
using System.Buffers.Binary;

namespace NetZlink.Engine;

/// <summary>
/// Packets of a 4-byte big-endian body length followed by the body: the engine's default, and the
/// wire of a zlink 1.3 STREAM socket. The engine lets the native library cut these packets (BATCH
/// framing, or LENGTH on a zlink 1.3 library) and checks <see cref="MinBody"/> and <see cref="MaxBody"/>
/// on each; bodies are at least one byte (the native framing ends a connection that announces an empty one).
/// </summary>
public sealed class LengthPrefixFramer : IPacketFramer
{
    /// <summary>Header size in bytes.</summary>
    public const int Size = 4;

    /// <summary>The framer with no upper bound of its own (the engine's MaxPacketSize still applies).</summary>
    public static LengthPrefixFramer Instance { get; } = new(int.MaxValue - Size);

    /// <summary>A framer that rejects bodies shorter than <paramref name="minBody"/> or longer than <paramref name="maxBody"/>.</summary>
    public LengthPrefixFramer(int maxBody, int minBody = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minBody);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxBody, minBody);
        MinBody = minBody;
        MaxBody = maxBody;
    }

    /// <summary>Smallest body accepted.</summary>
    public int MinBody { get; }

    /// <summary>Largest body accepted.</summary>
    public int MaxBody { get; }

    /// <inheritdoc/>
    public int HeaderSize => Size;

    /// <inheritdoc/>
    public int GetPacketLength(ReadOnlySpan<byte> header)
    {
        uint body = BinaryPrimitives.ReadUInt32BigEndian(header);
        return body < (uint)MinBody || body > (uint)MaxBody ? -1 : (int)body + Size;
    }

    /// <summary>Writes the header for a body of <paramref name="bodyLength"/> bytes.</summary>
    public static void WriteHeader(Span<byte> destination, int bodyLength)
        => BinaryPrimitives.WriteUInt32BigEndian(destination, (uint)bodyLength);
}
