// A routing id: the first frame of ROUTER and STREAM messages, naming one peer or connection.
// zlink's STREAM ids are 4 bytes, a big-endian u32 the library assigns (or CONNECT_ROUTING_ID).
using System.Buffers.Binary;

namespace NetZlink;

/// <summary>An immutable routing id (1–255 bytes). Equal when the bytes are equal.</summary>
public readonly struct RoutingId : IEquatable<RoutingId>
{
    private readonly byte[]? _bytes;

    /// <summary>Copies <paramref name="bytes"/> into a new routing id.</summary>
    /// <param name="bytes">The id's bytes, at most 255.</param>
    public RoutingId(ReadOnlySpan<byte> bytes)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(bytes.Length, 255, nameof(bytes));
        _bytes = bytes.ToArray();
    }

    internal RoutingId(byte[] ownedBytes) => _bytes = ownedBytes;

    /// <summary>The id's bytes.</summary>
    public ReadOnlySpan<byte> Span => _bytes;

    /// <summary>Number of bytes (0 for the default value).</summary>
    public int Length => _bytes?.Length ?? 0;

    /// <summary>True for the default value, which names nothing.</summary>
    public bool IsEmpty => Length == 0;

    /// <summary>A 4-byte id holding <paramref name="value"/> big-endian, the form zlink's STREAM sockets use.</summary>
    /// <param name="value">The id as a number.</param>
    /// <returns>The routing id.</returns>
    public static RoutingId FromUInt32(uint value)
    {
        var bytes = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, value);
        return new RoutingId(bytes);
    }

    /// <summary>Reads a 4-byte id as the big-endian number it holds.</summary>
    /// <returns>The number.</returns>
    /// <exception cref="InvalidOperationException">The id is not 4 bytes long.</exception>
    public uint ToUInt32() => Length == 4
        ? BinaryPrimitives.ReadUInt32BigEndian(_bytes)
        : throw new InvalidOperationException($"A {Length}-byte routing id is not a 4-byte STREAM id.");

    /// <summary>A copy of the bytes.</summary>
    /// <returns>A new array.</returns>
    public byte[] ToArray() => Span.ToArray();

    /// <inheritdoc/>
    public bool Equals(RoutingId other) => Span.SequenceEqual(other.Span);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is RoutingId other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode()
    {
        var hash = new HashCode();
        hash.AddBytes(Span);
        return hash.ToHashCode();
    }

    /// <summary>The bytes in hexadecimal, e.g. <c>0000002A</c>.</summary>
    /// <returns>The text.</returns>
    public override string ToString() => Convert.ToHexString(Span);

    /// <summary>Equality of the bytes.</summary>
    /// <param name="left">One id.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when equal.</returns>
    public static bool operator ==(RoutingId left, RoutingId right) => left.Equals(right);

    /// <summary>Inequality of the bytes.</summary>
    /// <param name="left">One id.</param>
    /// <param name="right">The other.</param>
    /// <returns>True when different.</returns>
    public static bool operator !=(RoutingId left, RoutingId right) => !left.Equals(right);
}
