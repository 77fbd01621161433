// The wrapper's cost, in two pairs, each public API against raw P/Invoke (the program's own
// declarations in RawZlink, on a RawPair made like the public SocketPair); Ratio is public API /
// raw P/Invoke within each category:
//   Step: the inproc PAIR send-then-receive of InprocLoop, Socket.TrySend + TryReceive against
//     zlink_send + zlink_recv.
//   OptionReads: Socket.SendHighWaterMark on one socket of the pair and ReceiveHighWaterMark on
//     the other, against zlink_getsockopt of the same options on the raw pair. Two calls, as in a
//     step, each taking the socket as every public call does (SocketLease) around a native call
//     that does little (an option looked up, no system call), so the wrapper's per-call part is
//     a large share of the time. It stands in for the lease-only benchmarks this class had while
//     it could see the binding's internals (TwoHandleLeases, TwoSocketLeases; see
//     benchmarks/README.md). An empty TryReceive would not do: a would-block zlink_recv polls the
//     socket's mailbox, a system call of about half a microsecond here.
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[CategoriesColumn]
public class InteropOverheadBenchmarks
{
    private const string Step = "Step";
    private const string OptionReads = "OptionReads";

    private ZlinkContext _context = null!;
    private SocketPair _pair = null!;
    private RawContext _rawContext = null!;
    private RawPair _rawPair = null!;
    private byte[] _payload = null!;
    private byte[] _buffer = null!;

    [Params(64, 1024, 8192)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _context = new ZlinkContext();
        _pair = SocketPair.Open(_context, Transport.Inproc, "interop-overhead");
        _rawContext = new RawContext();
        _rawPair = RawPair.Open(_rawContext, "interop-overhead");
        _payload = new byte[Size];
        Random.Shared.NextBytes(_payload);
        _buffer = new byte[Size];
        if (PublicTwoOptionReads() != 0 || RawTwoOptionReads() != 0)
        {
            throw new InvalidOperationException("The pairs' high-water marks are not the 0 SocketPair and RawPair set.");
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _pair.Dispose();
        _context.Dispose();
        _rawPair.Dispose();
        _rawContext.Dispose();
    }

    [Benchmark(Baseline = true)]
    [BenchmarkCategory(Step)]
    public int RawPInvoke() => InprocLoop.RawOnce(_rawPair.Client, _rawPair.Server, _payload, _buffer);

    [Benchmark]
    [BenchmarkCategory(Step)]
    public int PublicApi() => InprocLoop.PublicOnce(_pair.Client, _pair.Server, _payload, _buffer);

    /// <summary>The client's SNDHWM plus the server's RCVHWM (0: both unlimited).</summary>
    [Benchmark(Baseline = true)]
    [BenchmarkCategory(OptionReads)]
    public int RawTwoOptionReads() =>
        RawIntOption(_rawPair.Client, ZlinkConstants.ZLINK_SNDHWM) + RawIntOption(_rawPair.Server, ZlinkConstants.ZLINK_RCVHWM);

    /// <summary>The client's SNDHWM plus the server's RCVHWM (0: both unlimited).</summary>
    [Benchmark]
    [BenchmarkCategory(OptionReads)]
    public int PublicTwoOptionReads() => _pair.Client.SendHighWaterMark + _pair.Server.ReceiveHighWaterMark;

    /// <summary>An int option through zlink_getsockopt, its result checked as the binding checks it.</summary>
    private static unsafe int RawIntOption(nint socket, int option)
    {
        int value = 0;
        nuint size = sizeof(int);
        if (NativeMethods.zlink_getsockopt(socket, option, &value, &size) != 0 || size != sizeof(int))
        {
            RawZlink.ThrowFailed("zlink_getsockopt", NativeMethods.zlink_errno());
        }

        return value;
    }
}
