// Poller.Poll(0) over inproc PAIR servers, two of which hold an unread message (ready for
// PollIn) and two of which hold nothing: the mixed set, each half alone, and the mixed set
// through zlink_poll directly, so the wrapper's share shows as a ratio.
using BenchmarkDotNet.Attributes;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public unsafe class PollerBenchmarks
{
    private const int Pairs = 4;

    private readonly SocketPair[] _pairs = new SocketPair[Pairs];
    private readonly ZlinkPollItem[] _rawItems = new ZlinkPollItem[Pairs];
    private Context _context = null!;
    private Poller _mixed = null!;
    private Poller _readyOnly = null!;
    private Poller _idleOnly = null!;

    [GlobalSetup]
    public void Setup()
    {
        _context = new Context();
        _mixed = new Poller();
        _readyOnly = new Poller();
        _idleOnly = new Poller();
        for (int i = 0; i < Pairs; i++)
        {
            _pairs[i] = SocketPair.Open(_context, Transport.Inproc, $"poller-{i}");
            Socket server = _pairs[i].Server;
            bool ready = i % 2 == 0;
            if (ready)
            {
                // Never read: the server stays ready for PollIn for the whole run.
                _pairs[i].Client.Send("ready"u8);
                _readyOnly.Add(server, PollEvents.PollIn);
            }
            else
            {
                _idleOnly.Add(server, PollEvents.PollIn);
            }

            _mixed.Add(server, PollEvents.PollIn);
            _rawItems[i] = new ZlinkPollItem { Socket = server.NativeHandle, Events = ZlinkConstants.POLLIN };
        }

        if (_mixed.Poll(0) != Pairs / 2 || _readyOnly.Poll(0) != Pairs / 2 || _idleOnly.Poll(0) != 0)
        {
            throw new InvalidOperationException("The ready sockets are not the ones expected.");
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        foreach (SocketPair pair in _pairs)
        {
            pair.Dispose();
        }

        _context.Dispose();
    }

    [Benchmark(Baseline = true)]
    public int PollTwoReadyTwoIdle() => _mixed.Poll(0);

    [Benchmark]
    public int PollTwoReady() => _readyOnly.Poll(0);

    [Benchmark]
    public int PollTwoIdle() => _idleOnly.Poll(0);

    [Benchmark]
    public int RawZlinkPollTwoReadyTwoIdle()
    {
        fixed (ZlinkPollItem* items = _rawItems)
        {
            return NativeMethods.zlink_poll(items, Pairs, 0);
        }
    }
}
