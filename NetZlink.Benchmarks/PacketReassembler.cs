// The engine's packet reassembly, re-stated outside the shard for the benchmark. The real one
// (EngineShard.Dispatch and CompletePartial in NetZlink/Engine/EngineShard.Receive.cs) is private
// to a shard and only reachable through a live STREAM connection, so this copy follows it step
// by step: whole packets are cut out of each read in place, a packet split across reads is
// gathered in a buffer rented from an ArrayPool.Create pool (as the shard's), and the framer is
// called through IPacketFramer. Keep it in step with the engine when that changes.
using System.Buffers;
using NetZlink.Engine;

namespace NetZlink.Benchmarks;

internal sealed class PacketReassembler
{
    private readonly IPacketFramer _framer;
    private readonly int _maxPacketSize;
    private readonly ArrayPool<byte> _pool;
    private byte[]? _partial;
    private int _partialLength;
    private int _partialExpected;

    public PacketReassembler(IPacketFramer framer, int maxPacketSize)
    {
        _framer = framer;
        _maxPacketSize = maxPacketSize;
        _pool = ArrayPool<byte>.Create(maxPacketSize, 16);
    }

    /// <summary>Whole packets seen so far.</summary>
    public long Packets { get; private set; }

    /// <summary>Sum over packets of their length and last byte, so no packet goes unread.</summary>
    public long Checksum { get; private set; }

    /// <summary>One read of the stream, of any length.</summary>
    public void Feed(ReadOnlySpan<byte> data)
    {
        if (_partialLength > 0 && !CompletePartial(ref data))
        {
            return;
        }

        int header = _framer.HeaderSize;
        while (data.Length >= header)
        {
            int packet = _framer.GetPacketLength(data);
            if (packet < header || packet > _maxPacketSize)
            {
                throw new InvalidDataException($"Bad packet length {packet}.");
            }

            if (packet > data.Length)
            {
                break;
            }

            OnPacket(data[..packet]);
            data = data[packet..];
        }

        if (!data.IsEmpty)
        {
            int expected = data.Length >= header ? _framer.GetPacketLength(data) : 0;
            _partial = _pool.Rent(Math.Max(expected, Math.Max(header, 256)));
            data.CopyTo(_partial);
            _partialLength = data.Length;
            _partialExpected = expected;
        }
    }

    private bool CompletePartial(ref ReadOnlySpan<byte> data)
    {
        int header = _framer.HeaderSize;
        if (_partialExpected == 0)
        {
            int headerPart = Math.Min(header - _partialLength, data.Length);
            data[..headerPart].CopyTo(_partial.AsSpan(_partialLength));
            _partialLength += headerPart;
            data = data[headerPart..];
            if (_partialLength < header)
            {
                return false;
            }

            int expected = _framer.GetPacketLength(_partial.AsSpan(0, header));
            if (expected < header || expected > _maxPacketSize)
            {
                throw new InvalidDataException($"Bad packet length {expected}.");
            }

            _partialExpected = expected;
            if (_partial!.Length < expected)
            {
                byte[] larger = _pool.Rent(expected);
                _partial.AsSpan(0, _partialLength).CopyTo(larger);
                _pool.Return(_partial);
                _partial = larger;
            }
        }

        int take = Math.Min(_partialExpected - _partialLength, data.Length);
        data[..take].CopyTo(_partial.AsSpan(_partialLength));
        _partialLength += take;
        data = data[take..];
        if (_partialLength < _partialExpected)
        {
            return false;
        }

        byte[] whole = _partial!;
        int length = _partialLength;
        _partial = null;
        _partialLength = 0;
        _partialExpected = 0;
        OnPacket(whole.AsSpan(0, length));
        _pool.Return(whole);
        return true;
    }

    private void OnPacket(ReadOnlySpan<byte> packet)
    {
        Packets++;
        Checksum += packet.Length + packet[^1];
    }
}
