// Packet reassembly of a TCP byte stream: the engine's one implementation (EngineShard feeds it
// every read of every connection; NetZlink.Benchmarks times it; NetZlink.Tests fuzzes it).
//
// The protocol, per connection, over reads of any length:
//   - at a packet boundary, whole packets are cut out of the read in place (no copy) as long as
//     the read holds a complete header and the whole packet;
//   - what is left (a partial header, or a header and part of its body) is copied into a buffer
//     rented from the pool and kept in the connection's PartialPacket;
//   - the next reads first complete that packet (growing the buffer as its bytes arrive, at
//     least doubling each time, never past the packet's length), deliver it from the buffer,
//     return the buffer, then go on in place.
// Memory follows the bytes received, not what a header announces: a peer that announces 16 MiB
// and sends 1 KB holds a buffer of about 1 KB (at most twice what arrived, and at least 256 bytes).
// A header is checked as soon as its last byte arrives: a length below the header size or above
// the maximum is a protocol error at that point, after every earlier packet was delivered.
// Nothing is allocated per packet: the state is a struct owned by the caller, the sink is a
// struct (Feed is specialised for it), and partial buffers are pooled.
using System.Buffers;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace NetZlink.Engine;

/// <summary>
/// Cuts whole packets out of a TCP byte stream read in pieces of any length (the engine's own
/// reassembler, public for code that reads its own sockets): whole packets in a read are handed on in
/// place, a packet that spans reads is gathered in a pooled buffer held by the connection's
/// <see cref="PartialPacket"/>. Thread-safe for different connections; one connection's reads must
/// be fed in order, one at a time.
/// </summary>
internal sealed class PacketReassembler
{
    // A partial header needs only HeaderSize bytes, but renting a little more lets most small
    // packets complete in that first buffer without a second rental.
    private const int SmallestRental = 256;

    private readonly IPacketFramer _framer;
    private readonly int _header;
    private readonly int _maxPacketSize;
    private readonly ArrayPool<byte> _pool;

    /// <summary>Creates a reassembler for packets cut by <paramref name="framer"/>.</summary>
    /// <param name="framer">Finds each packet's length from its header.</param>
    /// <param name="maxPacketSize">Largest packet accepted, header included.</param>
    /// <param name="pool">Where partial packets are gathered (buffers grow with the bytes that arrive); should hand out arrays of up to <paramref name="maxPacketSize"/>.</param>
    public PacketReassembler(IPacketFramer framer, int maxPacketSize, ArrayPool<byte> pool)
    {
        ArgumentNullException.ThrowIfNull(framer);
        ArgumentNullException.ThrowIfNull(pool);
        ArgumentOutOfRangeException.ThrowIfLessThan(framer.HeaderSize, 1, "framer.HeaderSize");
        ArgumentOutOfRangeException.ThrowIfLessThan(maxPacketSize, framer.HeaderSize);
        _framer = framer;
        _header = framer.HeaderSize;
        _maxPacketSize = maxPacketSize;
        _pool = pool;
    }

    /// <summary>Largest packet accepted, header included.</summary>
    public int MaxPacketSize => _maxPacketSize;

    /// <summary>
    /// Takes one read of the stream: completes the partial packet, delivers every whole packet to
    /// <paramref name="sink"/> in order, and keeps what is left in <paramref name="partial"/>.
    /// </summary>
    public ReassemblyResult Feed<TSink>(ref PartialPacket partial, ReadOnlySpan<byte> data, ref TSink sink)
        where TSink : struct, IPacketSink
    {
        if (!partial.IsEmpty)
        {
            ReassemblyResult completed = CompletePartial(ref partial, ref data, ref sink);
            if (completed != ReassemblyResult.Consumed)
            {
                return completed;
            }
        }

        int header = _header;
        while (data.Length >= header)
        {
            int packet = _framer.GetPacketLength(data);
            if (packet < header || packet > _maxPacketSize)
            {
                return ReassemblyResult.ProtocolError;
            }

            if (packet > data.Length)
            {
                break;
            }

            if (!sink.OnPacket(data[..packet]))
            {
                return ReassemblyResult.Stopped;
            }

            data = data[packet..];
        }

        if (!data.IsEmpty)
        {
            Keep(ref partial, data);
        }

        return ReassemblyResult.Consumed;
    }

    /// <summary>Returns the partial packet's buffer to the pool (a connection ended); the dropped bytes were <see cref="PartialPacket.Length"/>.</summary>
    public void Release(ref PartialPacket partial)
    {
        if (partial.Buffer is not null)
        {
            _pool.Return(partial.Buffer);
        }

        partial = default;
    }

    /// <summary>Copies the start of a packet that the read ended in into a pooled buffer of its size (not the size its header announces).</summary>
    // Kept out of Feed (as CompletePartial is): inlined, the pool calls crowd the in-place loop,
    // which then runs about 1.7x slower (measured with the ReassemblyBenchmarks stream).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Keep(ref PartialPacket partial, ReadOnlySpan<byte> data)
    {
        Debug.Assert(partial.IsEmpty && partial.Buffer is null, "a partial packet is kept only at a packet boundary");

        // With a whole header in hand Feed's loop already checked the length.
        int header = _header;
        int expected = data.Length >= header ? _framer.GetPacketLength(data) : 0;
        partial.Buffer = _pool.Rent(Math.Max(data.Length, Math.Max(header, SmallestRental)));
        data.CopyTo(partial.Buffer);
        partial.Gathered = data.Length;
        partial.Expected = expected;
    }

    /// <summary>Room for <paramref name="needed"/> bytes: at least double the buffer, never past the packet's length.</summary>
    private void Grow(ref PartialPacket partial, int needed)
    {
        byte[] larger = _pool.Rent(Math.Min(partial.Expected, Math.Max(needed, (int)Math.Min(Array.MaxLength, 2L * partial.Buffer!.Length))));
        partial.Buffer.AsSpan(0, partial.Gathered).CopyTo(larger);
        _pool.Return(partial.Buffer);
        partial.Buffer = larger;
    }

    /// <summary>
    /// Adds the start of <paramref name="data"/> to the partial packet; when it is complete,
    /// delivers it and leaves the rest in <paramref name="data"/>. Consumed also when the data ran
    /// out first (then <paramref name="data"/> is empty and the packet still partial).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private ReassemblyResult CompletePartial<TSink>(ref PartialPacket partial, ref ReadOnlySpan<byte> data, ref TSink sink)
        where TSink : struct, IPacketSink
    {
        Debug.Assert(partial.Buffer is not null && partial.Gathered > 0, "a partial packet has bytes");
        int header = _header;
        if (partial.Expected == 0)
        {
            int headerPart = Math.Min(header - partial.Gathered, data.Length);
            data[..headerPart].CopyTo(partial.Buffer.AsSpan(partial.Gathered));
            partial.Gathered += headerPart;
            data = data[headerPart..];
            if (partial.Gathered < header)
            {
                return ReassemblyResult.Consumed;
            }

            int expected = _framer.GetPacketLength(partial.Buffer.AsSpan(0, header));
            if (expected < header || expected > _maxPacketSize)
            {
                return ReassemblyResult.ProtocolError;
            }

            partial.Expected = expected;
        }

        int take = Math.Min(partial.Expected - partial.Gathered, data.Length);
        if (partial.Gathered + take > partial.Buffer!.Length)
        {
            Grow(ref partial, partial.Gathered + take);
        }

        data[..take].CopyTo(partial.Buffer.AsSpan(partial.Gathered));
        partial.Gathered += take;
        data = data[take..];
        if (partial.Gathered < partial.Expected)
        {
            return ReassemblyResult.Consumed;
        }

        // Detach before delivering: the sink may end the connection, which releases the state.
        byte[] whole = partial.Buffer!;
        int length = partial.Gathered;
        partial = default;
        bool goOn = sink.OnPacket(whole.AsSpan(0, length));
        _pool.Return(whole);
        return goOn ? ReassemblyResult.Consumed : ReassemblyResult.Stopped;
    }
}
