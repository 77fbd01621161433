// The engine's connect retry policy and its up-front name check: an attempt that failed with an
// errno that cannot change on a retry resolves its connection after that one attempt, one that can
// pass is retried as configured (both in the same engine), and a host name that does not resolve
// is one ArgumentException from the constructor that names the host and the endpoint.
namespace NetZlink.Tests.Engine;

public sealed class ConnectRetryPolicyTests : EngineFixture
{
    private const int Retries = 3;
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(15);

    [RequiresStreamClient]
    // ipc:// on a STREAM socket: EPROTONOSUPPORT; port 99999: EINVAL. Both come back from
    // zlink_connect at once, the same on every try.
    [TestCase("ipc:///tmp/netzlink-no-such-socket", 93)]
    [TestCase("tcp://127.0.0.1:99999", 22)]
    [CancelAfter(60_000)]
    public void APermanentErrno_IsNotRetried_EachConnectionFailsAfterOneAttemptWithIt(string endpoint, int errno)
    {
        var handler = new FailureLog();
        using var engine = new ClientEngine(6, Options(endpoint));
        engine.Start(_ => handler);

        Assert.That(engine.ConnectsResolved.Wait(Patience), Is.True, "connect attempts never resolved");
        List<(Connection Connection, ConnectFailure Failure)> failures = handler.Failures;
        Assert.Multiple(() =>
        {
            Assert.That(failures, Has.Count.EqualTo(6), "one OnConnectFailed per connection");
            Assert.That(failures.Select(f => f.Failure.Attempts), Is.All.EqualTo(1), "attempts per connection");
            Assert.That(failures.Select(f => f.Failure.Errno), Is.All.EqualTo(errno));
            Assert.That(failures.Select(f => f.Failure.Permanent), Is.All.True);
            Assert.That(failures.Select(f => f.Failure.TimedOut), Is.All.False);
            Assert.That(engine.ErrorsByErrno(), Is.EqualTo(new Dictionary<int, long> { [errno] = 6 }), "errno counts: one attempt each");
            Assert.That(engine.ReadCounters().ConnectFailed, Is.EqualTo(6));
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void InOneEngine_RefusedConnectionsAreRetriedAsConfigured_WhileAPermanentErrnoIsTriedOnce()
    {
        // Connection i uses endpoint i % 2: even ones a refused port (ECONNREFUSED, transient), odd
        // ones a transport STREAM cannot connect over (EPROTONOSUPPORT, permanent).
        var handler = new FailureLog();
        EngineOptions options = Options($"tcp://127.0.0.1:{RawTcpServer.ClosedPort()}");
        options.Endpoints = [options.Endpoints[0], "ipc:///tmp/netzlink-no-such-socket"];
        using var engine = new ClientEngine(8, options);
        engine.Start(_ => handler);

        Assert.That(engine.ConnectsResolved.Wait(Patience), Is.True, "connect attempts never resolved");
        List<(Connection Connection, ConnectFailure Failure)> failures = handler.Failures;
        var refused = failures.Where(f => f.Connection.Index % 2 == 0).Select(f => f.Failure).ToList();
        var unsupported = failures.Where(f => f.Connection.Index % 2 == 1).Select(f => f.Failure).ToList();
        Assert.Multiple(() =>
        {
            Assert.That(refused, Has.Count.EqualTo(4));
            Assert.That(refused.Select(f => (f.Errno, f.Attempts, f.Permanent)), Is.All.EqualTo((111, Retries + 1, false)), "ECONNREFUSED: retried");
            Assert.That(unsupported, Has.Count.EqualTo(4));
            Assert.That(unsupported.Select(f => (f.Errno, f.Attempts, f.Permanent)), Is.All.EqualTo((93, 1, true)), "EPROTONOSUPPORT: not retried");
            Assert.That(engine.ErrorsByErrno(), Is.EqualTo(new Dictionary<int, long> { [111] = 4 * (Retries + 1), [93] = 4 }));
        });
    }

    [RequiresStreamClient]
    [Test, CancelAfter(60_000)]
    public void AHostThatDoesNotResolve_FailsTheConstructor_NamingTheHostAndTheEndpoint()
    {
        // A name that resolves passes the check (and the engine connects through it).
        using (var server = new RawTcpServer())
        {
            var handler = new FailureLog();
            using var engine = new ClientEngine(1, Options($"tcp://localhost:{server.Port}"));
            engine.Start(_ => handler);
            using System.Net.Sockets.Socket peer = server.Accept(Patience);
            Assert.That(engine.ConnectsResolved.Wait(Patience) && handler.Failures.Count == 0, Is.True, "connected through localhost");
        }

        // .invalid never resolves (RFC 6761).
        const string endpoint = "tcp://nonexistent.invalid:5555";
        var ex = Assert.Throws<ArgumentException>(() => new ClientEngine(4, Options("tcp://127.0.0.1:5555", endpoint)));
        Assert.Multiple(() =>
        {
            Assert.That(ex!.Message, Does.StartWith($"could not resolve host 'nonexistent.invalid' in endpoint {endpoint}: "));
            Assert.That(ex.InnerException, Is.InstanceOf<SocketException>(), "the resolver's own error is kept");
            Assert.That(ex.Message, Does.EndWith(ex.InnerException!.Message), "with the resolver's reason");
        });
    }

    [RequiresStreamFraming]
    [RequiresStreamClient]
    // A ws:// server that serves another path answers the upgrade with 404: EPROTO (71), and the same
    // request gets the same answer on every try, so the connection fails after one attempt.
    [Test]
    [CancelAfter(60_000)]
    public void ARefusedWebSocketUpgrade_IsNotRetried()
    {
        if (!ZlinkLibrary.Has("ws"))
        {
            Assert.Ignore("this native library has no ws:// (zlink_has(\"ws\") is 0)");
        }

        using var server = new ServerEngine(new EngineOptions { Endpoints = ["ws://127.0.0.1:*/right"], Framer = RawStreamFramer.Instance });
        server.Start(_ => new ServerEngineTests.EchoHandler());
        string wrong = server.BoundEndpoints[0].Replace("/right", "/wrong", StringComparison.Ordinal);
        var handler = new FailureLog();
        using var engine = new ClientEngine(2, Options(wrong));
        engine.Start(_ => handler);

        Assert.That(engine.ConnectsResolved.Wait(Patience), Is.True, "connect attempts never resolved");
        Assert.That(handler.Failures.Select(f => (f.Failure.Errno, f.Failure.Attempts, f.Failure.Permanent)), Is.EqualTo(new[] { (71, 1, true), (71, 1, true) }), $"{wrong}: one attempt each");
    }

    private static EngineOptions Options(params string[] endpoints) => new()
    {
        Endpoints = endpoints,
        ShardCount = 2,
        ConnectTimeout = TimeSpan.FromSeconds(5),
        ConnectRetries = Retries,
        ConnectRetryDelay = TimeSpan.FromMilliseconds(20),
    };

    /// <summary>Records each connection's final failure with the connection (shard threads write, the test reads).</summary>
    private sealed class FailureLog : IConnectionHandler
    {
        private readonly Lock _gate = new();
        private readonly List<(Connection, ConnectFailure)> _failures = [];

        public List<(Connection Connection, ConnectFailure Failure)> Failures
        {
            get
            {
                lock (_gate)
                {
                    return [.. _failures];
                }
            }
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
        {
            lock (_gate)
            {
                _failures.Add((connection, failure));
            }
        }

        public void OnConnected(EngineShard shard, Connection connection)
        {
        }

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
        }

        public void OnPass(EngineShard shard)
        {
        }
    }
}
