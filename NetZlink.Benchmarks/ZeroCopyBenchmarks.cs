// Sending without copying (ZlinkMessage.FromArray, ZlinkMessage.FromNative, each with a release callback)
// against the copying TrySend(span), over inproc PAIR. The receiver takes every frame into the
// same reused ZlinkMessage, so the receive side costs the same for all three and copies nothing;
// the zero-copy release callback runs when that ZlinkMessage takes the next frame.
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public unsafe class ZeroCopyBenchmarks
{
    // Cached once: a method group converted at each call would allocate a delegate per message.
    private static readonly Action<byte[]> ArrayReleased = OnArrayReleased;
    private static readonly MessageFreeCallback NativeReleased = OnNativeReleased;
    private static long s_released;

    private ZlinkContext _context = null!;
    private SocketPair _pair = null!;
    private ZlinkMessage _received = null!;
    private byte[] _array = null!;
    private byte* _native;

    [Params(64, 1024, 8192, 65536)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _context = new ZlinkContext();
        _pair = SocketPair.Open(_context, Transport.Inproc, "zero-copy");
        _received = new ZlinkMessage();
        _array = new byte[Size];
        Random.Shared.NextBytes(_array);
        _native = (byte*)NativeMemory.Alloc((nuint)Size);
        _array.CopyTo(new Span<byte>(_native, Size));
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        // The last zero-copy frame is still held by _received: release it before the memory.
        _received.Dispose();
        _pair.Dispose();
        _context.Dispose();
        NativeMemory.Free(_native);
    }

    [Benchmark(Baseline = true)]
    public int CopyingSpan()
    {
        Send(_pair.Client.TrySend(_array));
        return Receive();
    }

    [Benchmark]
    public int ZeroCopyFromArray()
    {
        using var message = ZlinkMessage.FromArray(_array, ArrayReleased);
        Send(_pair.Client.TrySend(message));
        return Receive();
    }

    [Benchmark]
    public int ZeroCopyFromNative()
    {
        using var message = ZlinkMessage.FromNative((nint)_native, Size, NativeReleased);
        Send(_pair.Client.TrySend(message));
        return Receive();
    }

    private static void OnArrayReleased(byte[] array) => Interlocked.Increment(ref s_released);

    private static void OnNativeReleased(nint data, object? state) => Interlocked.Increment(ref s_released);

    private void Send(bool sent)
    {
        if (!sent)
        {
            throw new InvalidOperationException($"TrySend of {Size} B over inproc would block with nothing in flight.");
        }
    }

    private int Receive()
    {
        if (!_pair.Server.TryReceive(_received))
        {
            throw new InvalidOperationException("An inproc frame was not there right after its send.");
        }

        return _received.Size;
    }
}
