// Async against sync in one run: one message there and back (PAIR to PAIR, or DEALER to ROUTER and
// back with the routing id), over inproc and tcp, through
// - Blocking: Send and Receive (the baseline),
// - TrySpin: TrySend and TryReceive retried until they succeed (as RoundTripBenchmarks),
// - Async: SendAsync and ReceiveAsync awaited (the fast path when the frame is there, the reactor
//   when it is not: over tcp every receive waits for zlink's I/O thread).
// Everything runs on the benchmark's own flow; one invocation is Trips round trips, so the figure
// is per round trip. The async method uses the pooling builder, so its awaits allocate nothing.
using System.Runtime.CompilerServices;
using BenchmarkDotNet.Attributes;

namespace NetZlink.Benchmarks;

[MemoryDiagnoser]
public class AsyncRoundTripBenchmarks
{
    private const int Trips = 200;
    private const int Size = 64;

    private ZlinkContext _context = null!;
    private ZlinkSocket _client = null!;
    private ZlinkSocket _server = null!;
    private byte[] _payload = null!;
    private byte[] _buffer = null!;
    private byte[] _id = null!;
    private int _idLength;

    /// <summary>The two socket types of the pair.</summary>
    public enum Pattern
    {
        /// <summary>PAIR to PAIR.</summary>
        Pair,

        /// <summary>DEALER to ROUTER; the ROUTER answers with the DEALER's routing id.</summary>
        DealerRouter,
    }

    [Params(Pattern.Pair, Pattern.DealerRouter)]
    public Pattern Sockets { get; set; }

    [Params(Transport.Inproc, Transport.Tcp)]
    public Transport Transport { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _context = new ZlinkContext();
        bool dealer = Sockets == Pattern.DealerRouter;
        _server = _context.CreateSocket(dealer ? ZlinkSocketType.Router : ZlinkSocketType.Pair);
        _client = _context.CreateSocket(dealer ? ZlinkSocketType.Dealer : ZlinkSocketType.Pair);
        foreach (ZlinkSocket socket in new[] { _server, _client })
        {
            socket.SendHighWaterMark = 0;
            socket.ReceiveHighWaterMark = 0;
        }

        if (Transport == Transport.Inproc)
        {
            _server.Bind("inproc://async-round-trip");
            _client.Connect("inproc://async-round-trip");
        }
        else
        {
            _server.Bind("tcp://127.0.0.1:*");
            _client.Connect(_server.LastEndpoint);
        }

        _payload = new byte[Size];
        Random.Shared.NextBytes(_payload);
        _buffer = new byte[Size];
        _id = new byte[256];

        // One round trip before measuring: the connection is up and the ROUTER knows the id.
        _client.Send(_payload);
        if (dealer)
        {
            _idLength = _server.Receive(_id);
        }

        _server.Receive(_buffer);
        Answer(_server, _buffer.Length);
        _client.Receive(_buffer);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _client.Dispose();
        _server.Dispose();
        _context.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Trips)]
    public int Blocking()
    {
        int size = 0;
        for (int i = 0; i < Trips; i++)
        {
            _client.Send(_payload);
            if (Sockets == Pattern.DealerRouter)
            {
                _server.Receive(_id);
            }

            size = _server.Receive(_buffer);
            Answer(_server, size);
            size = _client.Receive(_buffer);
        }

        return size;
    }

    [Benchmark(OperationsPerInvoke = Trips)]
    public int TrySpin()
    {
        int size = 0;
        for (int i = 0; i < Trips; i++)
        {
            while (!_client.TrySend(_payload))
            {
            }

            if (Sockets == Pattern.DealerRouter)
            {
                while (!_server.TryReceive(_id, out _))
                {
                }
            }

            while (!_server.TryReceive(_buffer, out size))
            {
            }

            Answer(_server, size);
            while (!_client.TryReceive(_buffer, out size))
            {
            }
        }

        return size;
    }

    [Benchmark(OperationsPerInvoke = Trips)]
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<int> Async()
    {
        int size = 0;
        for (int i = 0; i < Trips; i++)
        {
            await _client.SendAsync(_payload);
            if (Sockets == Pattern.DealerRouter)
            {
                await _server.ReceiveAsync(_id);
                await _server.SendAsync(_id.AsMemory(0, _idLength), SendFlags.SendMore);
            }

            size = await _server.ReceiveAsync(_buffer);
            await _server.SendAsync(_buffer.AsMemory(0, size));
            size = await _client.ReceiveAsync(_buffer);
        }

        return size;
    }

    private void Answer(ZlinkSocket server, int size)
    {
        if (Sockets == Pattern.DealerRouter)
        {
            server.Send(_id.AsSpan(0, _idLength), SendFlags.SendMore);
        }

        server.Send(_buffer.AsSpan(0, size));
    }
}
