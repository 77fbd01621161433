// The wrapper's cost: the same inproc PAIR send-then-receive, once through Socket.TrySend /
// TryReceive and once through the raw P/Invoke declarations in NativeMethods (no handle lease,
// no errno check beyond the return value). The Ratio column is public API / raw P/Invoke.
// TwoHandleLeases times the lease the public API used to take (one per call, two per step:
// DangerousAddRef + DangerousRelease on each socket's SafeHandle); TwoSocketLeases the one it
// takes now (SocketLease on the thread the socket is biased to: plain loads and stores, a
// second thread refused, the barriers moved to Dispose and to a change of thread; see SocketHandle).
using BenchmarkDotNet.Attributes;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public unsafe class InteropOverheadBenchmarks
{
    private Context _context = null!;
    private SocketPair _pair = null!;
    private nint _sender;
    private nint _receiver;
    private byte[] _payload = null!;
    private byte[] _buffer = null!;

    [Params(64, 1024, 8192)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _context = new Context();
        _pair = SocketPair.Open(_context, Transport.Inproc, "interop-overhead");
        _sender = _pair.Client.NativeHandle;
        _receiver = _pair.Server.NativeHandle;
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

    [Benchmark(Baseline = true)]
    public int RawPInvoke() => InprocLoop.RawOnce(_sender, _receiver, _payload, _buffer);

    [Benchmark]
    public int PublicApi() => InprocLoop.PublicOnce(_pair.Client, _pair.Server, _payload, _buffer);

    [Benchmark]
    public nint TwoHandleLeases()
    {
        using var sender = HandleLease.Acquire(_pair.Client.Handle, nameof(Socket));
        using var receiver = HandleLease.Acquire(_pair.Server.Handle, nameof(Socket));
        return sender.Value ^ receiver.Value;
    }

    [Benchmark]
    public nint TwoSocketLeases()
    {
        using var sender = SocketLease.Acquire(_pair.Client.Handle, "TrySend");
        using var receiver = SocketLease.Acquire(_pair.Server.Handle, "TryReceive");
        return sender.Value ^ receiver.Value;
    }
}
