// Each engine log event in the situation it reports, with its id (the table in docs/hosting.md),
// through a capturing logger provider; the per-shard rate limit; and no console output from the
// library itself.
using System.Net;
using System.Net.Sockets;
using NetZlink.Engine;

namespace NetZlink.Extensions.Tests;

[TestFixture]
[NonParallelizable]
public sealed class EngineLoggingTests
{
    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task ARefusedConnectLogsEachFailedAttemptAndTheGiveUpWithItsReason(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        string refusing = Local.RefusingEndpoint();
        await using (var client = new ClientEngine(1, new EngineOptions { Endpoints = [refusing], ConnectRetries = 1, ConnectRetryDelay = TimeSpan.FromMilliseconds(10), Name = "backend", LoggerFactory = logs.Factory() }))
        {
            client.Start(_ => new QuietHandler());
            await client.ConnectsResolved.WaitAsync(cancellationToken);
        }

        Assert.Multiple(() =>
        {
            Assert.That(logs.WithId(1000).Single().Message, Is.EqualTo($"backend started: ClientEngine, 1 shards, endpoints {refusing}"));
            Assert.That(logs.WithId(1010).Single().Message, Does.StartWith($"backend: connect attempt 1 of connection 0 to {refusing} failed: ECONNREFUSED (errno 111); retrying in 10 ms"), logs.Dump());
            Assert.That(logs.WithId(1011).Single().Message, Is.EqualTo($"backend: connection 0 to {refusing} failed after 2 attempts: ECONNREFUSED (errno 111); it is not retried again"), logs.Dump());
            Assert.That(logs.WithId(1011).Single().Level, Is.EqualTo(Microsoft.Extensions.Logging.LogLevel.Warning));
            Assert.That(logs.WithId(1001).Single().Message, Is.EqualTo("backend stopped: 0 connections established, 1 failed to connect, 0 ended, 0 queued sends dropped"));
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task ReconnectRoundsTheGiveUpAndAnIdleTimeoutAreLogged(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        ServerEngine server = Local.EchoServer("echo");
        string endpoint = server.BoundEndpoints[0];
        await using var client = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [endpoint],
            Name = "backend",
            LoggerFactory = logs.Factory(),
            ConnectRetries = 0,
            IdleTimeout = TimeSpan.FromMilliseconds(200),
            Reconnect = new ReconnectPolicy { InitialDelay = TimeSpan.FromMilliseconds(5), Jitter = 0, MaxAttempts = 2 },
        });
        client.Start(_ => new QuietHandler());
        // The echo server sends nothing unasked: the idle timeout ends the first generation and
        // the policy connects it again; then the server goes and the rounds run out.
        await Local.Until(() => logs.WithId(1018).Any() && client.ReadCounters().Connected == 2, "an idle timeout and a reconnect");
        await server.DisposeAsync();
        await Local.Until(() => logs.WithId(1017).Any(), "the give-up");
        await client.DrainAsync(TimeSpan.FromSeconds(5), cancellationToken);

        Assert.Multiple(() =>
        {
            Assert.That(logs.WithId(1018).First().Message, Does.StartWith($"backend: connection 0 ({endpoint}) closed: nothing received for ").And.EndWith(" ms (IdleTimeout)"), logs.Dump());
            Assert.That(logs.WithId(1016).Select(e => e.Message), Has.Some.EqualTo($"backend: connection 0 to {endpoint} is reconnecting: round 1 in 5 ms"), logs.Dump());
            Assert.That(logs.WithId(1017).Single().Message, Does.StartWith($"backend: connection 0 to {endpoint} could not be reconnected in 2 rounds (the last: connect failed: ECONNREFUSED"), logs.Dump());
            Assert.That(logs.WithId(1017).Single().Level, Is.EqualTo(Microsoft.Extensions.Logging.LogLevel.Warning));
            Assert.That(logs.WithId(1019).Single().Message, Does.StartWith("backend is draining"), logs.Dump());
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task ConnectsAndAPeersEndAreLogged(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        ServerEngine server = Local.EchoServer("echo", logs.Factory());
        string endpoint = server.BoundEndpoints[0];
        await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [endpoint], Name = "backend", LoggerFactory = logs.Factory() });
        client.Start(_ => new QuietHandler());
        await client.ConnectsResolved.WaitAsync(cancellationToken);
        await Local.Until(() => logs.WithId(1012).Count() == 2, "both ends to log the connection");
        await server.DisposeAsync();
        await Local.Until(() => logs.WithId(1013).Any(), "the client to log the peer's end");

        Assert.Multiple(() =>
        {
            Assert.That(logs.WithId(1012).Select(e => e.Message), Has.Some.EqualTo($"backend: connection 0 established with {endpoint}"), logs.Dump());
            Assert.That(logs.WithId(1012).Select(e => e.Message), Has.Some.EqualTo($"echo: connection 0 established with {endpoint}"), logs.Dump());
            Assert.That(logs.WithId(1013).Single().Message, Is.EqualTo($"backend: connection 0 ({endpoint}) ended by the peer or the transport"));
        });
    }

    [Test]
    [CancelAfter(30_000)]
    public async Task AServerLogsAProtocolErrorAndAConnectionBeyondMaxConnections(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        await using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], MaxConnections = 1, Name = "front", LoggerFactory = logs.Factory() });
        server.Start(_ => new QuietHandler());
        IPEndPoint at = Local.At(server.BoundEndpoints[0]);
        using var first = new TcpClient();
        await first.ConnectAsync(at, cancellationToken);
        await Local.Until(() => logs.WithId(1012).Any(), "the first connection");
        using var second = new TcpClient();
        await second.ConnectAsync(at, cancellationToken);
        await Local.Until(() => logs.WithId(1015).Any(), "the second connection to be refused");

        // A header announcing a body larger than the largest the framer takes.
        await first.GetStream().WriteAsync(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 1 }, cancellationToken);
        await Local.Until(() => logs.WithId(1014).Any(), "the protocol error");
        Assert.Multiple(() =>
        {
            Assert.That(logs.WithId(1015).Single().Message, Is.EqualTo($"front: a connection to {server.BoundEndpoints[0]} was refused: shard 0 holds MaxConnections (1) connections"));
            Assert.That(logs.WithId(1014).Single().Message, Is.EqualTo($"front: connection 0 ({server.BoundEndpoints[0]}) closed: the peer sent bytes the framer refuses"));
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task APostForAConnectionThatIsNotUpIsLoggedAsDropped(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [Local.RefusingEndpoint()], ConnectRetries = 100_000, ConnectRetryDelay = TimeSpan.FromMilliseconds(50), Name = "backend", LoggerFactory = logs.Factory() });
        client.Start(_ => new QuietHandler());
        Assert.That(client.TrySend(default, Local.Packet("lost")), Is.True);
        // The shard counts the drop, then logs it: wait for the log line.
        await Local.Until(() => logs.WithId(1020).Any(), "the dropped post to be logged");
        Assert.That(client.ReadSendQueueCounters().DroppedClosed, Is.EqualTo(1));
        Assert.That(logs.WithId(1020).Single().Message, Is.EqualTo("backend: a posted frame for connection 0 was dropped: the connection was not established or ended first"));
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task APeerThatDoesNotReadIsLoggedAsSlowAndARefusedSendAsWell(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Server.ReceiveBufferSize = 4096;
        listener.Start();
        Task<TcpClient> accepted = listener.AcceptTcpClientAsync(cancellationToken).AsTask();
        var options = new EngineOptions
        {
            Endpoints = [$"tcp://127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}"],
            HighWaterMark = 1,
            SendBufferSize = 4096,
            MaxPendingBytesPerConnection = 256 * 1024,
            Name = "backend",
            LoggerFactory = logs.Factory(),
        };
        var flooder = new FloodingHandler();
        await using var client = new ClientEngine(1, options);
        client.Start(_ => flooder);
        using TcpClient peer = await accepted; // accepted, never read
        await Local.Until(() => flooder.SawFull, "a send to be refused (Full)");
        Assert.Multiple(() =>
        {
            Assert.That(logs.WithId(1021).First().Message, Does.StartWith("backend: connection 0 (tcp://127.0.0.1:").And.Contains("is not keeping up: its socket queue is at the high-water mark (1 messages)"), logs.Dump());
            Assert.That(logs.WithId(1022).First().Message, Does.Contain("a send to connection 0 (").And.Contains("was refused (Full)"), logs.Dump());
        });
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task AReaderThatFallsBehindIsLoggedAsASlowConsumer(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        await using var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"] });
        server.Start(_ => new GreetingHandler(50));
        await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [server.BoundEndpoints[0]], Name = "backend", LoggerFactory = logs.Factory() });
        EngineChannel channel = client.StartChannel(new EngineChannelOptions { ReceiveCapacityPerShard = 4 });
        // The shard logs the pause, then the channel counts it.
        await Local.Until(() => logs.WithId(1023).Any() && channel.ReceivePauses > 0, "the shard to pause (nobody reads)");
        Assert.That(logs.WithId(1023).First().Message, Is.EqualTo("backend: shard 0 stopped reading its connections: the application has not taken the packets it was given (a slow consumer); TCP holds the peers back meanwhile"));
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task AContextDisposedUnderTheEngineIsLogged(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        var context = new ZlinkContext();
        await using var client = new ClientEngine(1, new EngineOptions { Endpoints = [Local.RefusingEndpoint()], ConnectRetries = 100_000, Name = "backend", LoggerFactory = logs.Factory() }, context);
        client.Start(_ => new QuietHandler());
        context.Dispose();
        await client.Stopped.WaitAsync(TimeSpan.FromSeconds(10), cancellationToken);
        Assert.That(logs.WithId(1003).Single().Message, Does.StartWith("backend stopped: its context was disposed or shut down"));
    }

    [RequiresStreamClient]
    [Test]
    [CancelAfter(30_000)]
    public async Task EventsThatRepeatPerConnectionAreLimitedPerShard(CancellationToken cancellationToken)
    {
        var logs = new CapturingLoggerProvider();
        const int Connections = 25;
        await using (var client = new ClientEngine(Connections, new EngineOptions { Endpoints = [Local.RefusingEndpoint()], ConnectRetries = 0, ShardCount = 1, LoggerFactory = logs.Factory() }))
        {
            client.Start(_ => new QuietHandler());
            await client.ConnectsResolved.WaitAsync(cancellationToken);
            Assert.That(client.ReadCounters().ConnectFailed, Is.EqualTo(Connections));
        }

        Assert.That(logs.WithId(1011).Count(), Is.EqualTo(LogGate.Limit), "one window lets Limit give-ups through");
    }

    [Test]
    public void TheGateCountsWhatItLeavesOutAndReportsItWithTheNextWindow()
    {
        var gate = default(LogGate);
        long window = LogGate.WindowSeconds * System.Diagnostics.Stopwatch.Frequency;
        int passed = 0;
        for (int i = 0; i < 25; i++)
        {
            passed += gate.TryPass(1000 + i, out long before) ? 1 : 0;
            Assert.That(before, Is.Zero);
        }

        Assert.That(passed, Is.EqualTo(LogGate.Limit));
        Assert.That(gate.TryPass(1000 + window - 1, out _), Is.False, "still the same window");
        Assert.That(gate.TryPass(1000 + window, out long suppressed), Is.True);
        Assert.That(suppressed, Is.EqualTo(25 - LogGate.Limit + 1));
    }

    [Test]
    public void TheLibraryWritesNothingToTheConsole()
    {
        string root = RepositoryRoot.Path;

        string[] offenders = Directory.EnumerateFiles(Path.Combine(root, "NetZlink"), "*.cs", SearchOption.AllDirectories)
            .Concat(Directory.EnumerateFiles(Path.Combine(root, "NetZlink.Extensions.Hosting"), "*.cs", SearchOption.AllDirectories))
            .Where(f => !f.Contains("/obj/", StringComparison.Ordinal))
            .SelectMany(f => File.ReadLines(f).Select((line, i) => (f, i, line)))
            .Where(x => !x.line.TrimStart().StartsWith("//", StringComparison.Ordinal)
                && (x.line.Contains("Console.", StringComparison.Ordinal) || x.line.Contains("Debug.Write", StringComparison.Ordinal) || x.line.Contains("Trace.Write", StringComparison.Ordinal)))
            .Select(x => $"{x.f}:{x.i + 1}: {x.line.Trim()}")
            .ToArray();
        Assert.That(offenders, Is.Empty);
    }

    /// <summary>Sends 64 KiB packets from OnConnected until the engine refuses one (Full).</summary>
    private sealed class FloodingHandler : QuietHandler
    {
        public bool SawFull { get; private set; }

        public override void OnConnected(EngineShard shard, Connection connection)
        {
            byte[] packet = Local.Packet(new string('x', 64 * 1024));
            for (int i = 0; i < 10_000 && !SawFull; i++)
            {
                SawFull = shard.Send(connection, packet) == SendResult.Full;
            }
        }
    }

    /// <summary>Sends a number of packets to each connection as it comes.</summary>
    private sealed class GreetingHandler(int packets) : QuietHandler
    {
        public override void OnConnected(EngineShard shard, Connection connection)
        {
            byte[] packet = Local.Packet("hello");
            for (int i = 0; i < packets; i++)
            {
                shard.Send(connection, packet);
            }
        }
    }
}
