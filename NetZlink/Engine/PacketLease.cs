// The pooled holder behind a packet EngineEvent: the rented array and a version that changes when
// the packet is given back. EngineEvent is a struct, so copies of one event are easy to make (a
// list, LINQ, a by-value argument); each copy carries the version it was made with, so only the
// first Dispose of any copy returns the array, later ones do nothing, and reading a packet that
// was already given back throws instead of showing another packet's bytes.
using System.Buffers;
using System.Collections.Concurrent;

namespace NetZlink.Engine;

internal sealed class PacketLease
{
    // Holders waiting for reuse; bounded so a burst does not keep them all for ever.
    private const int PoolLimit = 4096;
    private static readonly ConcurrentQueue<PacketLease> Pool = new();

    private byte[]? _array;
    private int _version;

    private PacketLease()
    {
    }

    /// <summary>A holder with a pooled array of at least <paramref name="length"/> bytes.</summary>
    public static PacketLease Rent(int length, out int version)
    {
        PacketLease lease = Pool.TryDequeue(out PacketLease? pooled) ? pooled : new PacketLease();
        lease._array = ArrayPool<byte>.Shared.Rent(length);
        version = Volatile.Read(ref lease._version);
        return lease;
    }

    /// <summary>The array while <paramref name="version"/> is current; null once that packet was given back.</summary>
    public byte[]? ArrayFor(int version) => Volatile.Read(ref _version) == version ? _array : null;

    /// <summary>Gives the packet of <paramref name="version"/> back; true for the first call of that version only.</summary>
    public bool TryReturn(int version)
    {
        byte[]? array = _array;
        if (Interlocked.CompareExchange(ref _version, version + 1, version) != version)
        {
            return false;
        }

        _array = null;
        if (array is not null)
        {
            ArrayPool<byte>.Shared.Return(array);
        }

        if (Pool.Count < PoolLimit)
        {
            Pool.Enqueue(this);
        }

        return true;
    }
}
