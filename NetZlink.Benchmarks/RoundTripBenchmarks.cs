// One message there and back over a PAIR: client TrySend, server TryReceive, server TrySend,
// client TryReceive, each retried (spinning) until it succeeds. Everything runs on the benchmark thread, so
// over tcp the figure includes two hops through zlink's I/O thread and the loopback interface.
using BenchmarkDotNet.Attributes;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public class RoundTripBenchmarks
{
    private ZlinkContext _context = null!;
    private SocketPair _pair = null!;
    private byte[] _payload = null!;
    private byte[] _buffer = null!;

    [Params(Transport.Inproc, Transport.Tcp)]
    public Transport Transport { get; set; }

    [Params(64, 1024, 8192)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _context = new ZlinkContext();
        _pair = SocketPair.Open(_context, Transport, "round-trip");
        _payload = new byte[Size];
        Random.Shared.NextBytes(_payload);
        _buffer = new byte[Size];
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _pair.Dispose();
        _context.Dispose();
    }

    [Benchmark]
    public int RoundTrip()
    {
        Pass(_pair.Client, _pair.Server);
        return Pass(_pair.Server, _pair.Client);
    }

    private int Pass(ZlinkSocket from, ZlinkSocket to)
    {
        while (!from.TrySend(_payload))
        {
        }

        int size;
        while (!to.TryReceive(_buffer, out size))
        {
        }

        return size;
    }
}
