// Randomized tests of the engine's packet reassembly (NetZlink.Engine.PacketReassembler, the code
// every shard feeds its reads to), in two packet formats (the reference [u32 BE body length][body]
// and a 2-byte whole-length header): random packets cut at random boundaries (1-byte reads, empty
// reads, reads spanning many packets) come out whole and in order; a bad length header is a
// protocol error exactly in the read that completes it, after every earlier packet; a sink that
// stops ends the read at that packet; every pooled buffer goes back; the steady state allocates
// nothing. Each test prints its seed: NETZLINK_FUZZ_SEED=<seed> replays it, and
// NETZLINK_FUZZ_ITERATIONS=<n> runs n streams instead of the default.
using System.Buffers;

namespace NetZlink.Tests.Engine;

public sealed class PacketReassemblerTests : EngineFixture
{
    private const int DefaultIterations = 200;

    // The u32 framer itself accepts bodies up to twice the reassembler's limit, so a bad header
    // can be refused by either (framer -1, or above MaxPacketSize); the u16 format's limit sits
    // below its largest header value for the same reason.
    private const int U32MaxPacket = 128 * 1024;
    private const int U16MaxPacket = 40_000;

    private static readonly string[] FormatNames = ["u32", "u16"];

    private static IEnumerable<string> Formats => FormatNames;

    [Test, CancelAfter(60_000)]
    public void RandomPackets_CutAtRandomBoundaries_ComeOutWholeAndInOrder([ValueSource(nameof(Formats))] string format)
    {
        Random random = Fuzz.Random(out int seed);
        int iterations = Fuzz.Iterations(DefaultIterations);
        var pool = new CountingArrayPool(MaxPacket(format));
        var reassembler = new PacketReassembler(Framer(format), MaxPacket(format), pool);
        long packets = 0, bytes = 0, reads = 0;
        for (int iteration = 0; iteration < iterations; iteration++)
        {
            string where = $"{format}, seed {seed}, iteration {iteration}";
            List<byte[]> sent = RandomPackets(random, format, random.Next(1, 121));
            byte[] stream = Concat(sent);
            var received = new List<byte[]>(sent.Count);
            var sink = new RecordingPacketSink(received);
            var partial = default(PartialPacket);
            foreach ((int offset, int length) in Cuts(random, stream.Length))
            {
                ReassemblyResult result = reassembler.Feed(ref partial, stream.AsSpan(offset, length), ref sink);
                if (result != ReassemblyResult.Consumed)
                {
                    Assert.Fail($"{where}: the read of {length} B at byte {offset} gave {result} on a stream of good packets");
                }

                reads++;
            }

            AssertSamePackets(received, sent, where);
            Assert.That(partial.IsEmpty && partial.Buffer is null, Is.True, $"{where}: the stream ended at a packet boundary, yet a partial packet of {partial.Length} B is held");
            Assert.That(pool.Outstanding, Is.Zero, $"{where}: pooled buffers not returned");
            packets += sent.Count;
            bytes += stream.Length;
        }

        TestContext.Out.WriteLine($"{format}: {iterations} streams, {packets} packets, {bytes} bytes in {reads} reads, {pool.Rents} pooled rentals, all returned");
    }

    [Test, CancelAfter(60_000)]
    public void BadLengthHeader_IsAProtocolError_InTheReadThatCompletesIt([ValueSource(nameof(Formats))] string format)
    {
        Random random = Fuzz.Random(out int seed);
        int iterations = Fuzz.Iterations(DefaultIterations);
        var pool = new CountingArrayPool(MaxPacket(format));
        var reassembler = new PacketReassembler(Framer(format), MaxPacket(format), pool);
        int header = Framer(format).HeaderSize;
        for (int iteration = 0; iteration < iterations; iteration++)
        {
            List<byte[]> good = RandomPackets(random, format, random.Next(0, 31));
            byte[] badHeader = BadHeader(random, format, out string why);
            string where = $"{format}, seed {seed}, iteration {iteration}, {good.Count} good packets then a header with {why}";
            byte[] goodBytes = Concat(good);
            byte[] stream = [.. goodBytes, .. badHeader, .. Fuzz.Bytes(random, random.Next(0, 5000))];
            int badHeaderEnd = goodBytes.Length + header - 1;

            var received = new List<byte[]>();
            var sink = new RecordingPacketSink(received);
            var partial = default(PartialPacket);
            bool refused = false;
            foreach ((int offset, int length) in Cuts(random, stream.Length))
            {
                ReassemblyResult result = reassembler.Feed(ref partial, stream.AsSpan(offset, length), ref sink);
                bool completesBadHeader = offset <= badHeaderEnd && badHeaderEnd < offset + length;
                ReassemblyResult expected = completesBadHeader ? ReassemblyResult.ProtocolError : ReassemblyResult.Consumed;
                if (result != expected)
                {
                    Assert.Fail($"{where}: the read of {length} B at byte {offset} gave {result}, expected {expected} (the bad header's last byte is at {badHeaderEnd})");
                }

                if (result == ReassemblyResult.ProtocolError)
                {
                    refused = true;
                    break;
                }
            }

            Assert.That(refused, Is.True, $"{where}: never refused");
            AssertSamePackets(received, good, where);
            reassembler.Release(ref partial);
            Assert.That(pool.Outstanding, Is.Zero, $"{where}: pooled buffers not returned after Release");
        }
    }

    [Test, CancelAfter(60_000)]
    public void SinkThatStops_EndsTheReadAtThatPacket([ValueSource(nameof(Formats))] string format)
    {
        Random random = Fuzz.Random(out int seed);
        int iterations = Fuzz.Iterations(DefaultIterations);
        var pool = new CountingArrayPool(MaxPacket(format));
        var reassembler = new PacketReassembler(Framer(format), MaxPacket(format), pool);
        for (int iteration = 0; iteration < iterations; iteration++)
        {
            List<byte[]> sent = RandomPackets(random, format, random.Next(1, 41));
            int stopAfter = random.Next(1, sent.Count + 1);
            string where = $"{format}, seed {seed}, iteration {iteration}, stop after {stopAfter} of {sent.Count}";
            byte[] stream = Concat(sent);
            int stopByte = sent.Take(stopAfter).Sum(p => p.Length) - 1;

            var received = new List<byte[]>();
            var sink = new RecordingPacketSink(received, stopAfter);
            var partial = default(PartialPacket);
            foreach ((int offset, int length) in Cuts(random, stream.Length))
            {
                ReassemblyResult result = reassembler.Feed(ref partial, stream.AsSpan(offset, length), ref sink);
                bool endsStopPacket = offset <= stopByte && stopByte < offset + length;
                ReassemblyResult expected = endsStopPacket ? ReassemblyResult.Stopped : ReassemblyResult.Consumed;
                if (result != expected)
                {
                    Assert.Fail($"{where}: the read of {length} B at byte {offset} gave {result}, expected {expected}");
                }

                if (result == ReassemblyResult.Stopped)
                {
                    break;
                }
            }

            AssertSamePackets(received, sent.Take(stopAfter).ToList(), where);
            reassembler.Release(ref partial);
            Assert.That(pool.Outstanding, Is.Zero, $"{where}: pooled buffers not returned after Release");
        }
    }

    [TestCase("u32", true)]
    [TestCase("u32", false)]
    [TestCase("u16", true)]
    [TestCase("u16", false)]
    [CancelAfter(10_000)]
    public void PacketOfExactlyMaxPacketSize_IsAccepted_AndOneByteMoreIsNot(string format, bool byteByByte)
    {
        int max = MaxPacket(format);
        var pool = new CountingArrayPool(max);
        var reassembler = new PacketReassembler(Framer(format), max, pool);
        byte[] largest = Packet(format, new byte[max - Framer(format).HeaderSize]);
        byte[] tooLarge = Packet(format, new byte[max - Framer(format).HeaderSize + 1]);
        largest[^1] = 0x5A;

        var received = new List<byte[]>();
        var sink = new RecordingPacketSink(received);
        var partial = default(PartialPacket);
        Assert.That(FeedAll(reassembler, ref partial, ref sink, largest, byteByByte), Is.EqualTo(ReassemblyResult.Consumed));
        Assert.That(received, Has.Count.EqualTo(1));
        Assert.That(received[0], Is.EqualTo(largest));

        Assert.That(FeedAll(reassembler, ref partial, ref sink, tooLarge, byteByByte), Is.EqualTo(ReassemblyResult.ProtocolError));
        Assert.That(received, Has.Count.EqualTo(1), "nothing of the refused packet is delivered");
        reassembler.Release(ref partial);
        Assert.That(pool.Outstanding, Is.Zero);
    }

    [Test, CancelAfter(60_000)]
    public void SteadyState_AllocatesNothing()
    {
        Random random = Fuzz.Random(out _);
        const int max = U32MaxPacket;

        // Pooled as a shard pools: ArrayPool.Create, not the shared pool.
        var reassembler = new PacketReassembler(Framer("u32"), max, ArrayPool<byte>.Create(max, 16));
        List<byte[]> sent = RandomPackets(random, "u32", 2000);
        byte[] stream = Concat(sent);
        (int Offset, int Length)[] cuts = [.. Cuts(random, stream.Length)];
        var partial = default(PartialPacket);
        var sink = default(CountingPacketSink);
        for (int pass = 0; pass < 30; pass++)
        {
            FeedCuts(reassembler, ref partial, ref sink, stream, cuts);
        }

        // The warm-up's pool rentals include large-object-heap arrays (above 85,000 bytes), and such
        // an allocation can start a background gen2 GC from this thread. While that GC is still
        // running, GetAllocatedBytesForCurrentThread can grow by up to one allocation context
        // (about 8 KiB) in its final suspension although this thread allocates nothing: the
        // "allocated 2752 bytes" of a full run (not seen with DOTNET_gcConcurrent=0). A blocking
        // collection here waits for any such GC and retires the thread's allocation context with
        // the right count, so the measured pass starts clean.
        GC.Collect();

        long packetsBefore = sink.Packets;
        long before = GC.GetAllocatedBytesForCurrentThread();
        FeedCuts(reassembler, ref partial, ref sink, stream, cuts);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        TestContext.Out.WriteLine($"{sent.Count} packets ({stream.Length} B) in {cuts.Length} reads allocated {allocated} bytes");
        Assert.That(sink.Packets - packetsBefore, Is.EqualTo(sent.Count));
        Assert.That(allocated, Is.Zero);
    }

    private static void FeedCuts(PacketReassembler reassembler, ref PartialPacket partial, ref CountingPacketSink sink, byte[] stream, (int Offset, int Length)[] cuts)
    {
        foreach ((int offset, int length) in cuts)
        {
            if (reassembler.Feed(ref partial, stream.AsSpan(offset, length), ref sink) != ReassemblyResult.Consumed)
            {
                Assert.Fail($"the read at byte {offset} was refused");
            }
        }
    }

    private static ReassemblyResult FeedAll(PacketReassembler reassembler, ref PartialPacket partial, ref RecordingPacketSink sink, byte[] data, bool byteByByte)
    {
        if (!byteByByte)
        {
            return reassembler.Feed(ref partial, data, ref sink);
        }

        for (int i = 0; i < data.Length; i++)
        {
            ReassemblyResult result = reassembler.Feed(ref partial, data.AsSpan(i, 1), ref sink);
            if (result != ReassemblyResult.Consumed)
            {
                return result;
            }
        }

        return ReassemblyResult.Consumed;
    }

    private static IPacketFramer Framer(string format) =>
        format == "u32" ? new LengthPrefixFramer(maxBody: 2 * U32MaxPacket) : new ShortLengthFramer();

    private static int MaxPacket(string format) => format == "u32" ? U32MaxPacket : U16MaxPacket;

    private static byte[] Packet(string format, byte[] body)
    {
        int header = format == "u32" ? LengthPrefixFramer.Size : ShortLengthFramer.Size;
        byte[] packet = new byte[header + body.Length];
        if (format == "u32")
        {
            LengthPrefixFramer.WriteHeader(packet, body.Length);
        }
        else
        {
            BinaryPrimitives.WriteUInt16BigEndian(packet, checked((ushort)packet.Length));
        }

        body.CopyTo(packet, header);
        return packet;
    }

    /// <summary>Packets of random content whose sizes are mostly small, sometimes large, now and then empty or the largest allowed.</summary>
    private static List<byte[]> RandomPackets(Random random, string format, int count)
    {
        int maxBody = MaxPacket(format) - (format == "u32" ? LengthPrefixFramer.Size : ShortLengthFramer.Size);
        var packets = new List<byte[]>(count);
        for (int i = 0; i < count; i++)
        {
            int roll = random.Next(1000);
            int body = roll switch
            {
                < 100 => 0,
                < 600 => random.Next(1, 65),
                < 900 => random.Next(65, 2001),
                < 990 => random.Next(2001, 20_001),
                < 998 => random.Next(20_001, maxBody),
                _ => maxBody,
            };
            packets.Add(Packet(format, Fuzz.Bytes(random, body)));
        }

        return packets;
    }

    /// <summary>A header the reassembler must refuse, and why.</summary>
    private static byte[] BadHeader(Random random, string format, out string why)
    {
        byte[] header;
        if (format == "u32")
        {
            header = new byte[LengthPrefixFramer.Size];
            uint body = random.Next(2) == 0
                ? (uint)random.NextInt64(U32MaxPacket - LengthPrefixFramer.Size + 1, 2 * U32MaxPacket + 1)
                : (uint)random.NextInt64(2L * U32MaxPacket + 1, uint.MaxValue + 1L);
            BinaryPrimitives.WriteUInt32BigEndian(header, body);
            why = body <= 2 * U32MaxPacket ? $"body {body} (above MaxPacketSize)" : $"body {body} (the framer says -1)";
        }
        else
        {
            header = new byte[ShortLengthFramer.Size];
            ushort total = random.Next(2) == 0 ? (ushort)random.Next(0, ShortLengthFramer.Size) : (ushort)random.Next(U16MaxPacket + 1, ushort.MaxValue + 1);
            BinaryPrimitives.WriteUInt16BigEndian(header, total);
            why = $"length {total}";
        }

        return header;
    }

    /// <summary>
    /// Random reads covering the stream in order. Each stream gets one style: all 1-byte reads,
    /// small, MTU-like, up to 64 KiB, up to the rest of the stream (spanning many packets), or a
    /// mix of all those plus empty reads.
    /// </summary>
    private static IEnumerable<(int Offset, int Length)> Cuts(Random random, int total)
    {
        const int Mixed = 5;
        int style = random.Next(Mixed + 1);
        for (int offset = 0; offset < total;)
        {
            int length = (style == Mixed ? random.Next(Mixed + 1) : style) switch
            {
                0 => 1,
                1 => random.Next(1, 17),
                2 => random.Next(1, 1501),
                3 => random.Next(1, 64 * 1024),
                4 => random.Next(1, total - offset + 1),
                _ => 0,
            };
            length = Math.Min(length, total - offset);
            yield return (offset, length);
            offset += length;
        }
    }

    private static byte[] Concat(List<byte[]> packets)
    {
        byte[] stream = new byte[packets.Sum(p => p.Length)];
        int offset = 0;
        foreach (byte[] packet in packets)
        {
            packet.CopyTo(stream, offset);
            offset += packet.Length;
        }

        return stream;
    }

    private static void AssertSamePackets(List<byte[]> received, List<byte[]> sent, string where)
    {
        Assert.That(received, Has.Count.EqualTo(sent.Count), $"{where}: packet count");
        for (int i = 0; i < sent.Count; i++)
        {
            if (!received[i].AsSpan().SequenceEqual(sent[i]))
            {
                Assert.Fail($"{where}: packet {i} differs: sent {sent[i].Length} B, received {received[i].Length} B");
            }
        }
    }
}
