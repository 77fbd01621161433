// One socket used from several threads at once. A socket is for one thread at a time; the binding
// refuses a call that overlaps another thread's call on the same socket with an
// InvalidOperationException naming the socket and the refused operation, and never lets the two
// reach the native socket together (which aborted the process on PAIR, and on STREAM and SUB left
// the socket's count of calls in progress wrong, so that Dispose never closed it and every round
// leaked descriptors and I/O threads). Dispose stays allowed from any thread at any time.
//
// The stress test is randomized: it prints the generator's start value (NETZLINK_FUZZ_SEED replays
// the same choices; thread timing still varies) and NETZLINK_FUZZ_ITERATIONS sets the rounds.
namespace NetZlink.Tests;

[TestFixture]
public sealed class ConcurrentUseTests
{
    private const int DefaultRounds = 24;
    private const int WarmUpRounds = 2;
    private const int Threads = 4;
    private const int CallsPerThread = 1500;
    private const string InUse = "is in use by another thread";

    /// <summary>How long closed connections' descriptors and a terminated context's threads may take to go.</summary>
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(5);

    private delegate void Call(ZlinkSocket socket, Random random, byte[] buffer);

    /// <param name="type">The socket hammered.</param>
    /// <param name="revokeOnEveryChange">
    /// False: the binding's policy (a socket stops giving its bias to a thread after two
    /// revocations). True: the bias moves to every thread that takes the socket, so the
    /// revocation races (a thread entering on its bias while another revokes it) happen on most
    /// changes of thread.
    /// </param>
    [TestCase(ZlinkSocketType.Pair, false), TestCase(ZlinkSocketType.Stream, false), TestCase(ZlinkSocketType.Sub, false)]
    [TestCase(ZlinkSocketType.Pair, true), TestCase(ZlinkSocketType.Stream, true), TestCase(ZlinkSocketType.Sub, true)]
    [CancelAfter(180_000)]
    public void OneSocket_HammeredFromSeveralThreads_RefusesOverlappingCalls_AndLeaksNothing(ZlinkSocketType type, bool revokeOnEveryChange)
    {
        int maxRevocations = SocketHandle.s_maxRevocations;
        SocketHandle.s_maxRevocations = revokeOnEveryChange ? int.MaxValue : maxRevocations;
        try
        {
            Hammer(type);
        }
        finally
        {
            SocketHandle.s_maxRevocations = maxRevocations;
        }
    }

    private static void Hammer(ZlinkSocketType type)
    {
        Random random = Fuzz.Random(out int seed);
        int rounds = Fuzz.Iterations(DefaultRounds);
        var outcomes = new Outcomes();
        int libraryThreadsSeen = 0;

        // Each round must close its socket and context; a round that does not is noted (and the
        // later rounds wait less for theirs), so the descriptors and threads it leaves are counted.
        var unclosed = new List<string>();
        ResourceSnapshot? baseline = null;
        for (int round = 0; round < WarmUpRounds + rounds; round++)
        {
            if (round == WarmUpRounds)
            {
                baseline = ResourceSnapshot.Take();
            }

            string where = $"seed {seed}, {type}, round {round}";
            int live = HandleTracker.LiveCount;
            libraryThreadsSeen = Math.Max(libraryThreadsSeen, Round(type, random, outcomes, where));
            if (!Eventually(() => HandleTracker.LiveCount <= live, unclosed.Count == 0 ? Settle : TimeSpan.FromSeconds(1)))
            {
                unclosed.Add($"{where}: {HandleTracker.Describe()}");
            }
        }

        ResourceSnapshot after = ResourceSnapshot.Take();
        Eventually(() =>
        {
            after = ResourceSnapshot.Take();
            return after.Descriptors.Count <= baseline!.Descriptors.Count && after.LibraryThreads <= baseline.LibraryThreads;
        }, Settle);

        TestContext.Out.WriteLine($"{type}, {rounds} rounds after {WarmUpRounds} to warm up: {outcomes}; {unclosed.Count} rounds left handles open; {baseline!.Against(after)}");
        Assert.Multiple(() =>
        {
            Assert.That(outcomes.Failures, Is.Empty, $"seed {seed}: calls that ended otherwise than documented");
            Assert.That(unclosed, Is.Empty, $"seed {seed}: rounds whose socket or context Dispose never closed");
            Assert.That(outcomes.Refused, Is.GreaterThan(0), $"seed {seed}: no call was refused, so no overlap was detected");
            Assert.That(outcomes.Completed, Is.GreaterThan(0), $"seed {seed}: no call completed");
            if (type != ZlinkSocketType.Stream)
            {
                // STREAM runs on the library's own engine, in the calling thread: no libzmq threads.
                Assert.That(libraryThreadsSeen, Is.GreaterThan(0), "the thread count never saw the library's I/O threads, so it cannot see them leak");
            }

            Assert.That(after.Descriptors.Count, Is.LessThanOrEqualTo(baseline.Descriptors.Count), $"seed {seed}: open descriptors grew: {string.Join(", ", baseline.NewIn(after))}");
            Assert.That(after.LibraryThreads, Is.LessThanOrEqualTo(baseline.LibraryThreads), $"seed {seed}: the library's threads grew");
        });
    }

    /// <param name="receiverCalledBefore">
    /// True: the receiving thread makes a call first, so the socket is biased to it and its
    /// Receive is inside on the bias (plain stores); false: its Receive is the call that takes the
    /// socket from the thread that bound it (the owner word).
    /// </param>
    [TestCase(false), TestCase(true), CancelAfter(30_000)]
    public void AnotherThreadsCall_WhileOneIsInside_IsRefused_NamingTheSocketAndTheOperation(bool receiverCalledBefore)
    {
        using var context = new ZlinkContext();
        (ZlinkSocket socket, ZlinkSocket peer, string endpoint) = InprocPair(context);
        byte[] received = new byte[16];
        int receiverThread = 0;
        var receiving = Task.Factory.StartNew(() =>
        {
            receiverThread = Environment.CurrentManagedThreadId;
            if (receiverCalledBefore)
            {
                Assert.That(socket.TryReceive(received, out _), Is.False);
            }

            return socket.Receive(received);
        }, TaskCreationOptions.LongRunning);

        // The receive blocks inside the socket until the peer sends: meanwhile every other call on
        // the socket is refused, and nothing reaches the native socket.
        var option = RefusedWithin(() => _ = socket.ReceiveHighWaterMark, "a call overlapping the blocked Receive to be refused");
        Assert.That(option.Message, Does.StartWith($"Socket(PAIR {endpoint}) {InUse} (GetOption refused: managed thread "));
        var send = Assert.Throws<InvalidOperationException>(() => socket.TrySend("x"u8));
        Assert.That(send!.Message, Does.StartWith($"Socket(PAIR {endpoint}) {InUse} (TrySend refused: managed thread {receiverThread} is inside a call on it)"));
        if (receiverCalledBefore)
        {
            Assert.That(socket.Handle.BiasedThread, Is.EqualTo(receiverThread), "the refused calls left the receiver its bias");
        }

        peer.Send("go"u8);
        Assert.That(receiving.Wait(Wait.Long), Is.True, "the receive never returned");
        Assert.That(received.AsSpan(0, receiving.Result).ToArray(), Is.EqualTo("go"u8.ToArray()));

        // Once the receive has returned the socket is free again, for any thread.
        Assert.That(socket.ReceiveHighWaterMark, Is.EqualTo(ZlinkDefaults.HighWaterMark));
        Assert.That(socket.TrySend("back"u8, Wait.Long), Is.True);
        Assert.That(Wait.Frame(peer), Is.EqualTo("back"u8.ToArray()));
    }

    [Test, CancelAfter(30_000)]
    public void ACallWhileAPollerWaitsOnTheSocket_IsRefused_AndAPollerMayHoldOneSocketTwice()
    {
        using var context = new ZlinkContext();
        (ZlinkSocket socket, ZlinkSocket peer, string endpoint) = InprocPair(context);
        var poller = new ZlinkPoller();
        poller.Add(socket, PollEvents.PollIn);
        poller.Add(socket, PollEvents.PollIn);
        var polling = Task.Factory.StartNew(() => poller.Poll(Wait.Long), TaskCreationOptions.LongRunning);

        var refused = RefusedWithin(() => socket.TryReceive(new byte[8], out _), "a receive overlapping the poll to be refused");
        Assert.That(refused.Message, Does.StartWith($"Socket(PAIR {endpoint}) {InUse} (TryReceive refused: managed thread "));

        peer.Send("ready"u8);
        Assert.That(polling.Wait(Wait.Long), Is.True, "the poll never returned");
        Assert.That(polling.Result, Is.EqualTo(2), "both items of the socket are ready");
        Assert.That(Wait.Frame(socket), Is.EqualTo("ready"u8.ToArray()));
    }

    /// <summary>Polls <paramref name="condition"/> until it holds or <paramref name="timeout"/> passes; whether it held.</summary>
    private static bool Eventually(Func<bool> condition, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }

            Thread.Sleep(20);
        }

        return true;
    }

    /// <summary>A PAIR bound on a fresh inproc endpoint and its connected peer (closed with the context).</summary>
    private static (ZlinkSocket Socket, ZlinkSocket Peer, string Endpoint) InprocPair(ZlinkContext context)
    {
        ZlinkSocket socket = context.CreateSocket(ZlinkSocketType.Pair);
        ZlinkSocket peer = context.CreateSocket(ZlinkSocketType.Pair);
        string endpoint = Endpoints.Inproc();
        socket.Bind(endpoint);
        peer.Connect(endpoint);
        return (socket, peer, endpoint);
    }

    /// <summary>Repeats <paramref name="call"/> until it is refused as overlapping another thread's call; fails the test when it never is.</summary>
    private static InvalidOperationException RefusedWithin(Action call, string what)
    {
        InvalidOperationException? refused = null;
        Wait.Until(() =>
        {
            try
            {
                call();
                return false;
            }
            catch (InvalidOperationException e) when (e is not ObjectDisposedException)
            {
                refused = e;
                return true;
            }
        }, what);
        return refused!;
    }

    /// <summary>One round: a fresh context and socket, <see cref="Threads"/> threads calling it at random, Dispose at a random moment.</summary>
    /// <returns>The library's threads alive during the round.</returns>
    private static int Round(ZlinkSocketType type, Random random, Outcomes outcomes, string where)
    {
        using var context = new ZlinkContext();
        ZlinkSocket socket = context.CreateSocket(type);
        ZlinkSocket peer = Connect(context, socket, random);
        int libraryThreads = ResourceSnapshot.CountLibraryThreads();
        Operation[] calls = Calls(type);
        int disposing = 0;

        using var start = new Barrier(Threads + 1);
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            var own = new Random(random.Next());
            string thread = $"{where}, thread {t}";
            threads[t] = new Thread(() =>
            {
                byte[] buffer = new byte[64];
                start.SignalAndWait();
                for (int i = 0; i < CallsPerThread; i++)
                {
                    if (own.Next(CallsPerThread * 2) == 0)
                    {
                        Volatile.Write(ref disposing, 1);
                        socket.Dispose();
                        continue;
                    }

                    var call = calls[own.Next(calls.Length)];
                    if (!outcomes.Run(socket, call.Name, call.Operations, () => call.Run(socket, own, buffer), () => Volatile.Read(ref disposing) != 0, thread))
                    {
                        return;
                    }
                }
            });
            threads[t].Start();
        }

        int delay = random.Next(0, 25);
        start.SignalAndWait();
        Thread.Sleep(delay);
        Volatile.Write(ref disposing, 1);
        socket.Dispose();
        foreach (Thread thread in threads)
        {
            Assert.That(thread.Join(Wait.Long), Is.True, $"{where}: a calling thread hung");
        }

        Assert.That(socket.IsDisposed, Is.True);
        peer.Dispose();
        return libraryThreads;
    }

    /// <summary>Gives <paramref name="socket"/> a peer and something to receive; returns the peer.</summary>
    private static ZlinkSocket Connect(ZlinkContext context, ZlinkSocket socket, Random random)
    {
        byte[] payload = Fuzz.Bytes(random, 32);
        switch (socket.Type)
        {
            case ZlinkSocketType.Pair:
            {
                ZlinkSocket peer = context.CreateSocket(ZlinkSocketType.Pair);
                socket.Connect(Endpoints.BindFresh(peer, random.Next(2) == 0 ? "inproc" : "tcp"));
                for (int i = 0; i < 200; i++)
                {
                    peer.TrySend(payload);
                }

                return peer;
            }

            case ZlinkSocketType.Sub:
            {
                ZlinkSocket peer = context.CreateSocket(ZlinkSocketType.Pub);
                socket.Connect(Endpoints.BindFresh(peer, random.Next(2) == 0 ? "inproc" : "tcp"));
                socket.Subscribe("");
                for (int i = 0; i < 200; i++)
                {
                    peer.TrySend(payload);
                }

                return peer;
            }

            case ZlinkSocketType.Stream:
            {
                ZlinkSocket peer = context.CreateSocket(ZlinkSocketType.Stream);
                StreamSockets.ConnectOrIgnore(peer, StreamSockets.Bind(socket));
                RoutingId id = StreamSockets.ReceiveEvent(peer, StreamSockets.Connected);
                for (int i = 0; i < 20; i++)
                {
                    StreamSockets.Send(peer, id, payload);
                }

                return peer;
            }

            default:
                throw new ArgumentOutOfRangeException(nameof(socket), socket.Type, "PAIR, SUB or STREAM");
        }
    }

    /// <summary>
    /// The calls the threads pick from: each with the operations its refusal may name (a call with
    /// a timeout also waits in Poll). Only single-frame calls: a multipart receive whose later frame
    /// another thread took would wait for a frame that never comes.
    /// </summary>
    private static Operation[] Calls(ZlinkSocketType type)
    {
        var calls = new List<Operation>
        {
            new("TryReceive(span)", ["TryReceive"], (s, _, b) => s.TryReceive(b, out int _)),
            new("TryReceive(span, timeout)", ["TryReceive", "Poll"], (s, r, b) => s.TryReceive(b, TimeSpan.FromMilliseconds(r.Next(2)), out _)),
            new("TryReceive(message)", ["TryReceive"], (s, _, _) =>
            {
                using var message = new ZlinkMessage();
                s.TryReceive(message);
            }),
            new("ReceiveHighWaterMark", ["GetOption"], (s, _, _) => _ = s.ReceiveHighWaterMark),
            new("LastEndpoint", ["GetOption"], (s, _, _) => _ = s.LastEndpoint),
            new("Linger =", ["SetOption"], (s, r, _) => s.Linger = r.Next(2)),
        };

        switch (type)
        {
            case ZlinkSocketType.Pair:
                calls.Add(new("TrySend(span)", ["TrySend"], (s, _, b) => s.TrySend(b)));
                calls.Add(new("TrySend(span, timeout)", ["TrySend", "Poll"], (s, r, b) => s.TrySend(b, TimeSpan.FromMilliseconds(r.Next(2)))));
                calls.Add(new("TrySend(message)", ["TrySend"], (s, _, b) =>
                {
                    using var message = new ZlinkMessage(b);
                    s.TrySend(message);
                }));
                break;
            case ZlinkSocketType.Sub:
                calls.Add(new("Subscribe", ["SetOption"], (s, r, _) => s.Subscribe([(byte)r.Next(4)])));
                calls.Add(new("Unsubscribe", ["SetOption"], (s, r, _) => s.Unsubscribe([(byte)r.Next(4)])));
                break;
            case ZlinkSocketType.Stream:
                calls.Add(new("PeerCount", ["PeerCount"], (s, _, _) => _ = s.PeerCount));
                calls.Add(new("GetPeers", ["PeerCount", "GetPeers"], (s, _, _) => _ = s.GetPeers()));
                break;
        }

        return [.. calls];
    }

    /// <summary>A call the threads may make, and the operations its refusal may name.</summary>
    private sealed record Operation(string Name, string[] Operations, Call Run);

    /// <summary>What the calls came to, from every thread.</summary>
    private sealed class Outcomes
    {
        private int _completed;
        private int _refused;
        private int _disposed;

        public ConcurrentQueue<string> Failures { get; } = new();

        public int Completed => Volatile.Read(ref _completed);

        public int Refused => Volatile.Read(ref _refused);

        /// <summary>Runs one call and files its outcome; false once the socket was found disposed (the thread stops).</summary>
        public bool Run(ZlinkSocket socket, string name, string[] operations, Action call, Func<bool> disposing, string where)
        {
            try
            {
                call();
                Interlocked.Increment(ref _completed);
                return true;
            }
            catch (ObjectDisposedException e)
            {
                Interlocked.Increment(ref _disposed);
                if (!disposing())
                {
                    Failures.Enqueue($"{where}: {name} threw ObjectDisposedException before Dispose: {e.Message}");
                }

                return false;
            }
            catch (InvalidOperationException e)
            {
                Interlocked.Increment(ref _refused);
                string expected = $"Socket({socket.Type.ToString().ToUpperInvariant()}";
                if (!e.Message.StartsWith(expected, StringComparison.Ordinal) || !e.Message.Contains(InUse, StringComparison.Ordinal)
                    || !operations.Any(operation => e.Message.Contains($"({operation} ", StringComparison.Ordinal)))
                {
                    Failures.Enqueue($"{where}: {name} refused with an unexpected message: {e.Message}");
                }

                return true;
            }
            catch (Exception e)
            {
                Failures.Enqueue($"{where}: {name} threw {e.GetType().Name}: {e.Message}");
                return true;
            }
        }

        public override string ToString() =>
            $"{Completed} calls completed, {Refused} refused as overlapping, {Volatile.Read(ref _disposed)} found the socket disposed, {Failures.Count} failed otherwise";
    }
}
