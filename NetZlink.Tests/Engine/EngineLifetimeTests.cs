// Tearing an engine down under load: a few hundred connections keep packets flowing against an
// echo server while another thread disposes (or shuts down) the engine's context, or disposes the
// engine. Every shard thread must exit within ShardExitBound, every live connection must hear
// exactly one OnDisconnected with the reason, nothing may be thrown except the documented
// ContextTerminatedException in ClientEngine.Fault, and a second Dispose must do nothing.
namespace NetZlink.Tests.Engine;

public sealed class EngineLifetimeTests : EngineFixture
{
    /// <summary>
    /// The stated bound (docs/binding.md, "Lifetime under load"): from the Dispose (or Shutdown) call until
    /// every shard thread has exited, closed its socket and ended its connections. A shard notices
    /// at its next native call or, when idle, within one poll wait (at most 250 ms).
    /// </summary>
    internal static readonly TimeSpan ShardExitBound = TimeSpan.FromSeconds(5);

    private const int Connections = 300;
    private const int Shards = 2;

    [RequiresStreamClient]
    [TestCase("Context.Dispose"), TestCase("Context.Shutdown"), CancelAfter(60_000)]
    public void TerminatingTheContext_WhileTrafficFlows_StopsEveryShardWithinTheBound(string teardown)
    {
        using var server = new StreamEchoServer();
        var context = new ZlinkContext();
        var engine = new ClientEngine(Connections, Options(server.Endpoint), context);
        EchoPumpHandler[] handlers = StartUnderLoad(engine);

        Exception? thrown = null;
        var clock = Stopwatch.StartNew();
        var terminator = new Thread(() =>
        {
            try
            {
                if (teardown == "Context.Dispose")
                {
                    context.Dispose();
                }
                else
                {
                    context.Shutdown();
                }
            }
#pragma warning disable CA1031 // whatever it is, the assertion below reports it
            catch (Exception e)
#pragma warning restore CA1031
            {
                thrown = e;
            }
        });
        terminator.Start();

        bool returned = terminator.Join(ShardExitBound);
        bool stopped = AllShardsExited(engine, handlers, clock);
        TimeSpan exited = clock.Elapsed;
        TestContext.Out.WriteLine($"{teardown}: call returned {returned}, every shard exited {stopped}, after {exited.TotalMilliseconds:0} ms; fault: {engine.Fault?.Message}");

        Assert.Multiple(() =>
        {
            Assert.That(returned, Is.True, $"{teardown} did not return within {ShardExitBound}");
            Assert.That(stopped, Is.True, $"the shard threads did not all exit within {ShardExitBound}");
            Assert.That(thrown, Is.Null, $"{teardown} threw");
            Assert.That(engine.Fault, Is.InstanceOf<ContextTerminatedException>());
            Assert.That(engine.Fault?.Message, Does.Contain("context was disposed or shut down while the engine ran"));
            Assert.That(engine.ConnectsResolved.IsCompletedSuccessfully, Is.True, "connects had resolved before the teardown");
            AssertEveryLiveConnectionEndedOnce(handlers, ConnectionEndReason.ContextTerminated);
            Assert.That(engine.TrySend(new Connection(0, 0, 0), [0, 0, 0, 1, 7]), Is.False, "a stopped engine refuses posts");
        });

        AssertSecondDisposeIsANoOp(engine);
        context.Dispose();
        context.Dispose();
        Assert.That(context.IsDisposed, Is.True);
        Assert.That(HandleTracker.Live(NativeHandleKind.Context), Is.EqualTo(1), "only the echo server's context is left");
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void DisposingTheEngine_FromAnotherThread_WhileTrafficFlows_StopsEveryShardWithinTheBound()
    {
        using var server = new StreamEchoServer();
        var engine = new ClientEngine(Connections, Options(server.Endpoint));
        EchoPumpHandler[] handlers = StartUnderLoad(engine);

        var clock = Stopwatch.StartNew();
        var disposer = new Thread(engine.Dispose);
        disposer.Start();
        bool returned = disposer.Join(ShardExitBound);
        bool stopped = AllShardsExited(engine, handlers, clock);
        TestContext.Out.WriteLine($"engine.Dispose: returned {returned}, every shard exited {stopped}, after {clock.Elapsed.TotalMilliseconds:0} ms");

        Assert.Multiple(() =>
        {
            Assert.That(returned, Is.True, $"Dispose did not return within {ShardExitBound}");
            Assert.That(stopped, Is.True, $"the shard threads did not all exit within {ShardExitBound}");
            Assert.That(engine.Fault, Is.Null, "an engine stopped on request has no fault");
            AssertEveryLiveConnectionEndedOnce(handlers, ConnectionEndReason.EngineStopped);
        });

        AssertSecondDisposeIsANoOp(engine);
        Assert.That(HandleTracker.Live(NativeHandleKind.Context), Is.EqualTo(1), "the engine's own context was terminated");
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void DisposingTheEngine_OnTheUsersContext_LeavesThatContextUsable()
    {
        using var server = new StreamEchoServer();
        using var context = new ZlinkContext();
        var engine = new ClientEngine(40, Options(server.Endpoint), context);
        EchoPumpHandler[] handlers = StartUnderLoad(engine);

        engine.Dispose();
        Assert.That(AllShardsExited(engine, handlers, Stopwatch.StartNew()), Is.True);
        AssertEveryLiveConnectionEndedOnce(handlers, ConnectionEndReason.EngineStopped);
        Assert.That(context.IsDisposed, Is.False, "the engine does not dispose a context it was given");
        using ZlinkSocket socket = context.CreateSocket(ZlinkSocketType.Pair);
        socket.Bind(Endpoints.Inproc());
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void DisposingTheContextAndTheEngine_AtTheSameTime_NeitherHangsNorThrows()
    {
        using var server = new StreamEchoServer();
        for (int round = 0; round < 5; round++)
        {
            var context = new ZlinkContext();
            var engine = new ClientEngine(40, Options(server.Endpoint), context);
            EchoPumpHandler[] handlers = StartUnderLoad(engine);

            var errors = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
            using var start = new Barrier(2);
            var clock = Stopwatch.StartNew();
            var threads = new[] { (Action)context.Dispose, engine.Dispose }.Select(dispose => new Thread(() =>
            {
                start.SignalAndWait();
                try
                {
                    dispose();
                }
#pragma warning disable CA1031 // collected and reported below
                catch (Exception e)
#pragma warning restore CA1031
                {
                    errors.Enqueue(e);
                }
            })).ToList();
            threads.ForEach(t => t.Start());
            bool joined = threads.All(t => t.Join(ShardExitBound));

            Assert.Multiple(() =>
            {
                Assert.That(joined, Is.True, $"round {round}: a Dispose did not return within {ShardExitBound}");
                Assert.That(AllShardsExited(engine, handlers, clock), Is.True, $"round {round}: shards still running");
                Assert.That(errors, Is.Empty, $"round {round}: a Dispose threw");
                Assert.That(handlers.Sum(h => h.UnmatchedEnds), Is.Zero, $"round {round}: a connection ended twice");
                Assert.That(handlers.Sum(h => h.StillLive), Is.Zero, $"round {round}: a connection never heard it ended");
            });
        }
    }

    [RequiresStreamClient]
    [Test, CancelAfter(30_000)]
    public void DisposingTheContext_WhileConnectsAreStillRetrying_FaultsConnectsResolvedWithContextTerminated()
    {
        var context = new ZlinkContext();
        EngineOptions options = Options($"tcp://127.0.0.1:{RawTcpServer.ClosedPort()}");
        options.ConnectRetries = 1000;
        options.ConnectRetryDelay = TimeSpan.FromSeconds(1);
        using var engine = new ClientEngine(10, options, context);
        var handlers = new EchoPumpHandler[engine.ShardCount];
        engine.Start(shard => handlers[shard.Index] = new EchoPumpHandler(shard));
        Wait.Until(() => engine.ErrorsByErrno().GetValueOrDefault(111) >= 10, "every connection's first refused attempt");

        var clock = Stopwatch.StartNew();
        context.Dispose();
        bool stopped = AllShardsExited(engine, handlers, clock);
        TestContext.Out.WriteLine($"context disposed while connects retried: shards exited {stopped} after {clock.Elapsed.TotalMilliseconds:0} ms");

        Assert.That(stopped, Is.True, $"the shard threads did not all exit within {ShardExitBound}");
        var ex = Assert.Throws<AggregateException>(() => engine.ConnectsResolved.Wait(Wait.Long));
        Assert.That(ex!.InnerException, Is.InstanceOf<ContextTerminatedException>());
        Assert.That(handlers.Sum(h => h.Connected + h.ConnectFailed + h.EndedTotal), Is.Zero, "nothing connected, failed for good or ended");
    }

    [Test, CancelAfter(30_000)]
    public void Start_AfterTheContextWasDisposed_FailsNamingTheContext()
    {
        var context = new ZlinkContext();
        using var engine = new ClientEngine(4, Options("tcp://127.0.0.1:1"), context);
        context.Dispose();

        var ex = Assert.Throws<ObjectDisposedException>(() => engine.Start(shard => new EchoPumpHandler(shard)));
        Assert.That(ex!.Message, Does.Contain("ClientEngine.Start").And.Contain("Context"));
        Assert.That(engine.Stopped.IsCompleted, Is.True, "an engine that could not start is stopped");
    }

    private static EngineOptions Options(string endpoint) => new()
    {
        Endpoints = [endpoint],
        ShardCount = Shards,
        ConnectTimeout = TimeSpan.FromSeconds(10),
        ConnectRetries = 0,
    };

    /// <summary>Starts the engine with a pump handler per shard and returns once every connection is up and echoes are flowing.</summary>
    private static EchoPumpHandler[] StartUnderLoad(ClientEngine engine)
    {
        var handlers = new EchoPumpHandler[engine.ShardCount];
        engine.Start(shard => handlers[shard.Index] = new EchoPumpHandler(shard));
        Wait.Until(() => engine.ConnectsResolved.IsCompleted, "every connect to resolve", TimeSpan.FromSeconds(30));
        Assert.That(handlers.Sum(h => h.Connected), Is.EqualTo(engine.ConnectionCount), "every connection connected");

        // Traffic is flowing: each connection has echoed at least its window, and the count still rises.
        long enough = (long)engine.ConnectionCount * EchoPumpHandler.Window;
        Wait.Until(() => handlers.Sum(h => h.Packets) >= enough, "echoes on every connection", TimeSpan.FromSeconds(30));
        long before = handlers.Sum(h => h.Packets);
        Wait.Until(() => handlers.Sum(h => h.Packets) > before, "echoes to keep coming");
        return handlers;
    }

    /// <summary>Whether Stopped completed and every shard thread has exited, within what is left of the bound.</summary>
    private static bool AllShardsExited(ClientEngine engine, EchoPumpHandler[] handlers, Stopwatch clock)
    {
        TimeSpan Left() => ShardExitBound - clock.Elapsed > TimeSpan.Zero ? ShardExitBound - clock.Elapsed : TimeSpan.Zero;
        return engine.Stopped.Wait(Left()) && handlers.All(h => h.Shard.Join(Left()));
    }

    private static void AssertEveryLiveConnectionEndedOnce(EchoPumpHandler[] handlers, ConnectionEndReason expected)
    {
        long connected = handlers.Sum(h => h.Connected);
        string byReason = string.Join("; ", handlers.Select((h, i) => $"shard {i}: " + string.Join(", ", Enum.GetValues<ConnectionEndReason>().Select(r => $"{r} {h.Ended(r)}"))));
        Assert.That(handlers.Sum(h => h.Ended(expected)), Is.EqualTo(connected), $"every connection ended with {expected} (ends by reason: {byReason})");
        Assert.That(handlers.Sum(h => h.EndedTotal), Is.EqualTo(connected), "every connection ended once");
        Assert.That(handlers.Sum(h => h.UnmatchedEnds), Is.Zero, "no connection heard OnDisconnected twice");
        Assert.That(handlers.Sum(h => h.StillLive), Is.Zero, "no connection was left without OnDisconnected");
    }

    private static void AssertSecondDisposeIsANoOp(ClientEngine engine)
    {
        var clock = Stopwatch.StartNew();
        Assert.DoesNotThrow(engine.Dispose);
        Assert.DoesNotThrow(engine.Dispose);
        Assert.That(clock.Elapsed, Is.LessThan(ShardExitBound), "Dispose of a stopped engine returns at once");
        Assert.Throws<ObjectDisposedException>(() => engine.Start(shard => new EchoPumpHandler(shard)));
    }
}
