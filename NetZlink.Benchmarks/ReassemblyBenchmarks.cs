// Packet reassembly over a 1 MiB stream of 1024-byte length-prefixed packets (1024 packets):
// the framer alone over the contiguous stream (LengthPrefixFramer.GetPacketLength + slicing),
// and the engine's own reassembler (NetZlink.Engine.PacketReassembler, the type every shard
// feeds its reads to) fed the same stream cut in random chunk sizes, with a pool made as a
// shard makes its pool. Figures are per packet.
using System.Buffers;
using BenchmarkDotNet.Attributes;
using NetZlink.Engine;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public class ReassemblyBenchmarks
{
    private const int PacketSize = 1024;
    private const int PacketCount = 1024;
    private const int SmallestRead = 1;

    private readonly IPacketFramer _framer = new LengthPrefixFramer(maxBody: PacketSize);
    private readonly byte[] _stream = new byte[PacketSize * PacketCount];
    private int[] _mtuReads = null!;
    private int[] _largeReads = null!;
    private PacketReassembler _reassembler = null!;
    private PartialPacket _partial;
    private ChecksumSink _sink;

    [GlobalSetup]
    public void Setup()
    {
        var random = new Random(42);
        random.NextBytes(_stream);
        for (int offset = 0; offset < _stream.Length; offset += PacketSize)
        {
            LengthPrefixFramer.WriteHeader(_stream.AsSpan(offset), PacketSize - LengthPrefixFramer.Size);
        }

        _mtuReads = CutLengths(random, 1500);
        _largeReads = CutLengths(random, 16 * 1024);
        _reassembler = new PacketReassembler(_framer, PacketSize, ArrayPool<byte>.Create(PacketSize, 16));
        Feed(_mtuReads);
        if (_sink.Packets != PacketCount || !_partial.IsEmpty)
        {
            throw new InvalidOperationException($"Reassembled {_sink.Packets} packets, expected {PacketCount}.");
        }
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = PacketCount)]
    public long FramerOverWholeStream()
    {
        IPacketFramer framer = _framer;
        ReadOnlySpan<byte> data = _stream;
        long checksum = 0;
        while (data.Length >= framer.HeaderSize)
        {
            int packet = framer.GetPacketLength(data);
            if (packet < framer.HeaderSize || packet > data.Length)
            {
                break;
            }

            checksum += packet + data[packet - 1];
            data = data[packet..];
        }

        return checksum;
    }

    [Benchmark(OperationsPerInvoke = PacketCount)]
    public long ReassembleReadsUpTo1500() => Feed(_mtuReads);

    [Benchmark(OperationsPerInvoke = PacketCount)]
    public long ReassembleReadsUpTo16K() => Feed(_largeReads);

    /// <summary>Random read lengths from 1 to <paramref name="largest"/> that add up to the stream.</summary>
    private int[] CutLengths(Random random, int largest)
    {
        var lengths = new List<int>();
        for (int remaining = _stream.Length; remaining > 0;)
        {
            int length = Math.Min(remaining, random.Next(SmallestRead, largest + 1));
            lengths.Add(length);
            remaining -= length;
        }

        return [.. lengths];
    }

    private long Feed(int[] reads)
    {
        ReadOnlySpan<byte> stream = _stream;
        int offset = 0;
        foreach (int length in reads)
        {
            if (_reassembler.Feed(ref _partial, stream.Slice(offset, length), ref _sink) != ReassemblyResult.Consumed)
            {
                throw new InvalidDataException($"The reassembler refused the stream at byte {offset}.");
            }

            offset += length;
        }

        return _sink.Checksum;
    }

    /// <summary>Reads every packet (its length and last byte), so none goes unread.</summary>
    private struct ChecksumSink : IPacketSink
    {
        public long Packets;
        public long Checksum;

        public bool OnPacket(ReadOnlySpan<byte> packet)
        {
            Packets++;
            Checksum += packet.Length + packet[^1];
            return true;
        }
    }
}
