// A packet handed out through a ChannelReader: pooled bytes the reader gives back with Dispose.
using System.Buffers;

namespace NetZlink.Engine;

/// <summary>
/// One received packet (header included) in a buffer rented from <see cref="ArrayPool{T}.Shared"/>.
/// Dispose it once read so the buffer goes back to the pool.
/// </summary>
public readonly struct ReceivedPacket : IDisposable
{
    private readonly byte[]? _buffer;

    internal ReceivedPacket(Connection connection, byte[] buffer, int length)
    {
        Connection = connection;
        _buffer = buffer;
        Length = length;
    }

    /// <summary>The connection it came from.</summary>
    public Connection Connection { get; }

    /// <summary>Packet length in bytes.</summary>
    public int Length { get; }

    /// <summary>The packet bytes; valid until Dispose.</summary>
    public ReadOnlySpan<byte> Span => _buffer.AsSpan(0, Length);

    /// <summary>Returns the buffer to the pool.</summary>
    public void Dispose()
    {
        if (_buffer is not null)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }
    }
}
