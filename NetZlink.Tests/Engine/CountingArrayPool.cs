// An ArrayPool that checks how PacketReassembler uses it: every array returned was rented from it
// and is returned once, and at the end of a test nothing is still out.
using System.Buffers;

namespace NetZlink.Tests.Engine;

internal sealed class CountingArrayPool(int maxArrayLength) : ArrayPool<byte>
{
    private readonly ArrayPool<byte> _inner = Create(maxArrayLength, 16);
    private readonly HashSet<byte[]> _out = new(ReferenceEqualityComparer.Instance);

    /// <summary>Arrays rented and not yet returned.</summary>
    public int Outstanding => _out.Count;

    public int Rents { get; private set; }

    public override byte[] Rent(int minimumLength)
    {
        byte[] array = _inner.Rent(minimumLength);
        Rents++;
        if (!_out.Add(array))
        {
            throw new InvalidOperationException("the inner pool handed out an array that is still rented");
        }

        return array;
    }

    public override void Return(byte[] array, bool clearArray = false)
    {
        if (!_out.Remove(array))
        {
            throw new InvalidOperationException($"an array of {array.Length} bytes was returned that is not rented (returned twice, or never rented here)");
        }

        _inner.Return(array, clearArray);
    }
}
