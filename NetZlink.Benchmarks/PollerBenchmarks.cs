// ZlinkPoller.Poll(0) over inproc PAIR servers, two of which hold an unread message (ready for
// PollIn) and two of which hold nothing: the mixed set, each half alone, and the mixed set
// through zlink_poll directly, so the wrapper's share shows as a ratio. The direct call polls the
// same layout made with raw sockets (RawPair, RawZlink's own declarations), since the binding's
// socket pointers are not public.
using BenchmarkDotNet.Attributes;
using NetZlink.Interop;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public unsafe class PollerBenchmarks
{
    private const int Pairs = 4;

    private readonly SocketPair[] _pairs = new SocketPair[Pairs];
    private readonly RawPair[] _rawPairs = new RawPair[Pairs];
    private readonly ZlinkPollItem[] _rawItems = new ZlinkPollItem[Pairs];
    private ZlinkContext _context = null!;
    private RawContext _rawContext = null!;
    private ZlinkPoller _mixed = null!;
    private ZlinkPoller _readyOnly = null!;
    private ZlinkPoller _idleOnly = null!;

    [GlobalSetup]
    public void Setup()
    {
        _context = new ZlinkContext();
        _rawContext = new RawContext();
        _mixed = new ZlinkPoller();
        _readyOnly = new ZlinkPoller();
        _idleOnly = new ZlinkPoller();
        for (int i = 0; i < Pairs; i++)
        {
            _pairs[i] = SocketPair.Open(_context, Transport.Inproc, $"poller-{i}");
            _rawPairs[i] = RawPair.Open(_rawContext, $"poller-{i}");
            ZlinkSocket server = _pairs[i].Server;
            bool ready = i % 2 == 0;
            if (ready)
            {
                // Never read: the server stays ready for PollIn for the whole run.
                _pairs[i].Client.Send("ready"u8);
                RawPair.Send(_rawPairs[i].Client, "ready"u8);
                _readyOnly.Add(server, PollEvents.PollIn);
            }
            else
            {
                _idleOnly.Add(server, PollEvents.PollIn);
            }

            _mixed.Add(server, PollEvents.PollIn);
            _rawItems[i] = new ZlinkPollItem { Socket = _rawPairs[i].Server, Events = ZlinkConstants.POLLIN };
        }

        if (_mixed.Poll(0) != Pairs / 2 || _readyOnly.Poll(0) != Pairs / 2 || _idleOnly.Poll(0) != 0
            || RawZlinkPollTwoReadyTwoIdle() != Pairs / 2)
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

        foreach (RawPair pair in _rawPairs)
        {
            pair.Dispose();
        }

        _context.Dispose();
        _rawContext.Dispose();
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
