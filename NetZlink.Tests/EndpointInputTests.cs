// Bad endpoints for Bind, Connect, Unbind and Disconnect on PAIR and STREAM sockets: a NUL
// character and an unpaired surrogate are refused by the binding (EINVAL, saying why) instead of
// reaching the library as another endpoint; empty and very long endpoints fail cleanly or work
// (a 100,000-character inproc name binds, reads back through LastEndpoint and carries data);
// text outside ASCII round-trips; and random endpoints (seeded, the seed printed) either work and
// can be undone, or fail with an exception naming the call, the endpoint and the errno, after
// which the socket still binds and carries data. No random endpoint makes the library ask DNS:
// the ports of random tcp endpoints are never numbers, and the hosts are literal addresses (the
// STREAM engine, which checks the port before it looks at the host, also gets random hosts).
namespace NetZlink.Tests;

public sealed class EndpointInputTests : ContextTest
{
    private const int DefaultIterations = 300;

    private static readonly string[] Operations = ["Bind", "Connect", "Unbind", "Disconnect"];

    private static readonly string[] LiteralHosts = ["127.0.0.1", "0.0.0.0", "*", "", "[::1]", "[", "]", "[]", "::1", "255.255.255.255", "[::ffff:127.0.0.1]"];

    // Random transport names must not be real ones: those are covered by their own shapes.
    private static readonly string[] KnownTransports = ["tcp", "ipc", "inproc", "tls", "ws", "wss", "udp", "pgm", "epgm", "norm", "tipc", "vmci"];

    [TestCase(ZlinkSocketType.Pair)]
    [TestCase(ZlinkSocketType.Stream)]
    [CancelAfter(30_000)]
    public void EndpointWithANul_IsRefusedWithEinval_NotCutShort(ZlinkSocketType type)
    {
        using var socket = Context.CreateSocket(type);
        string head = type == ZlinkSocketType.Stream ? "tcp://127.0.0.1:*" : Endpoints.Inproc();
        string endpoint = head + "\0-and-more";

        foreach (string operation in Operations)
        {
            var error = Assert.Throws<EndpointException>(() => Call(socket, operation, endpoint))!;
            Assert.Multiple(() =>
            {
                Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL), operation);
                Assert.That(error.Endpoint, Is.EqualTo(endpoint), operation);
                Assert.That(error.Message, Is.EqualTo(
                    $"{operation}(\"{head}\\u0000-and-more\") failed: EINVAL (22): Invalid argument " +
                    $"(the endpoint has a NUL character at index {head.Length}, where the native library would end the text)"));
            });
        }

        // Had the text before the NUL reached the library, it would be bound now.
        Assert.That(socket.LastEndpoint, Is.Empty, "nothing was bound");
        socket.Bind(head);
        if (type == ZlinkSocketType.Pair)
        {
            using var second = Context.CreateSocket(type);
            Assert.Throws<EndpointException>(() => second.Bind(head), "the name is taken by the real bind only");
        }
    }

    [TestCase(ZlinkSocketType.Pair)]
    [TestCase(ZlinkSocketType.Stream)]
    [CancelAfter(30_000)]
    public void EndpointWithAnUnpairedSurrogate_IsRefusedWithEinval_NotReplaced(ZlinkSocketType type)
    {
        using var socket = Context.CreateSocket(type);
        string head = type == ZlinkSocketType.Stream ? "tcp://127.0.0.1:" : Endpoints.Inproc();
        string endpoint = head + "\uD800x";

        foreach (string operation in Operations)
        {
            var error = Assert.Throws<EndpointException>(() => Call(socket, operation, endpoint))!;
            Assert.That(error.Error, Is.EqualTo(ZlinkError.EINVAL), operation);
            Assert.That(error.Message, Does.StartWith($"{operation}(\"{head}\\uD800x\") failed: EINVAL (22): "));
            Assert.That(error.Message, Does.EndWith($"(the endpoint has an unpaired surrogate U+D800 at index {head.Length}, which has no UTF-8 form)"));
        }

        // Encoded with replacement characters, "\uD800x" and "\uDBFFx" would have been one name.
        Assert.That(socket.LastEndpoint, Is.Empty, "nothing was bound");
    }

    [Test, CancelAfter(30_000)]
    public void EndpointOutsideAscii_RoundTripsExactly()
    {
        var (server, client) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        string endpoint = $"inproc://netzlink-ünïcödé-日本語-😀-{Guid.NewGuid():N}";

        server.Bind(endpoint);
        Assert.That(server.LastEndpoint, Is.EqualTo(endpoint));
        client.Connect(endpoint);
        Assert.That(client.TrySend(Wait.Bytes("über"), Wait.Long), Is.True);
        Assert.That(Wait.Text(Wait.Frame(server)), Is.EqualTo("über"));
        client.Disconnect(endpoint);
        server.Unbind(endpoint);
    }

    [TestCase(ZlinkSocketType.Pair)]
    [TestCase(ZlinkSocketType.Stream)]
    [CancelAfter(30_000)]
    public void EmptyEndpoint_FailsCleanly(ZlinkSocketType type)
    {
        using var socket = Context.CreateSocket(type);
        foreach (string operation in Operations)
        {
            bool succeeded = ErrorShape.Check(() => Call(socket, operation, ""), $"{operation}(\"\")", $"{type}: {operation}(\"\")");
            Assert.That(succeeded, Is.False, $"{operation}(\"\") should fail");
        }
    }

    [Test, CancelAfter(30_000)]
    public void VeryLongInprocEndpoint_Binds_ReadsBack_AndCarriesData()
    {
        var (server, client) = Sockets(ZlinkSocketType.Pair, ZlinkSocketType.Pair);
        string endpoint = Endpoints.Inproc() + new string('n', 100_000);

        server.Bind(endpoint);
        Assert.That(server.LastEndpoint, Is.EqualTo(endpoint), "LastEndpoint of a value longer than the first option buffer");
        client.Connect(endpoint);
        Assert.That(client.TrySend(Wait.Bytes("long"), Wait.Long), Is.True);
        Assert.That(Wait.Text(Wait.Frame(server)), Is.EqualTo("long"));
        client.Disconnect(endpoint);
        server.Unbind(endpoint);
    }

    [TestCase(ZlinkSocketType.Pair, "tcp://127.0.0.1:")]
    [TestCase(ZlinkSocketType.Pair, "ipc:///tmp/")]
    [TestCase(ZlinkSocketType.Pair, "unknown-transport://")]
    [TestCase(ZlinkSocketType.Stream, "tcp://127.0.0.1:")]
    [TestCase(ZlinkSocketType.Stream, "tcp://")]
    [CancelAfter(30_000)]
    public void VeryLongEndpoint_FailsCleanly_WithAShortMessage(ZlinkSocketType type, string head)
    {
        if (type == ZlinkSocketType.Stream)
        {
            // Connect is one of the operations: a server-only STREAM refuses it before the endpoint.
            NativeNeeds.RequireStreamClient();
        }

        using var socket = Context.CreateSocket(type);
        string endpoint = head + new string('x', 100_000);
        foreach (string operation in Operations)
        {
            string shown = $"{operation}(\"{Utf8Z.Printable(endpoint)}\")";
            try
            {
                Call(socket, operation, endpoint);
                Assert.Fail($"{operation} of a 100,000-character {head} endpoint succeeded");
            }
            catch (ZlinkException e)
            {
                Assert.That(e.Message, Does.StartWith($"{shown} failed: {e.ErrorName} ({e.Errno}): "));
                Assert.That(e.Message, Does.Contain($"…({endpoint.Length} characters)"));
                Assert.That(e.Message, Has.Length.LessThan(1000), "the message shows the start of the endpoint, not all of it");
                Assert.That(((EndpointException)e).Endpoint, Is.EqualTo(endpoint), "the exception keeps the whole endpoint");
            }
        }
    }

    [TestCase(ZlinkSocketType.Pair)]
    [TestCase(ZlinkSocketType.Stream)]
    [CancelAfter(60_000)]
    public void RandomEndpoints_WorkOrFailCleanly_AndTheSocketStillWorks(ZlinkSocketType type)
    {
        Random random = Fuzz.Random(out int seed);
        int iterations = Fuzz.Iterations(DefaultIterations);
        string ipcDirectory = Path.Combine(Path.GetTempPath(), $"netzlink-endpoints-{Guid.NewGuid():N}");
        Directory.CreateDirectory(ipcDirectory);
        var tally = new Tally();
        try
        {
            using var socket = Context.CreateSocket(type);
            for (int iteration = 0; iteration < iterations; iteration++)
            {
                string endpoint = RandomEndpoint(random, ipcDirectory, type);
                string where = $"seed {seed}, iteration {iteration}, {type}, endpoint {RandomText.Describe(endpoint)}";
                foreach (string operation in Operations)
                {
                    // A PAIR that connected somewhere and disconnected may turn later peers away
                    // (docs/native-bugs.md, entries 4 and 5), so a PAIR's connects go to a socket of
                    // their own (checked all the same) and the one under test only binds: it can
                    // then show it still takes a peer.
                    bool pairConnect = type == ZlinkSocketType.Pair && operation is ("Connect" or "Disconnect");
                    using ZlinkSocket? spare = pairConnect ? Context.CreateSocket(type) : null;
                    ZlinkSocket target = spare ?? socket;
                    bool succeeded = ErrorShape.Check(() => Call(target, operation, endpoint), $"{operation}(\"{Utf8Z.Printable(endpoint)}\")", $"{where}: {operation}");
                    tally.Count(succeeded);
                    if (succeeded && operation is "Bind" or "Connect")
                    {
                        // What worked can be undone with the very same string: it reached the
                        // library unchanged.
                        string undo = operation == "Bind" ? "Unbind" : "Disconnect";
                        bool undone = ErrorShape.Check(() => Call(target, undo, endpoint), $"{undo}(\"{Utf8Z.Printable(endpoint)}\")", $"{where}: {undo} after {operation}");
                        if (endpoint.StartsWith("inproc://", StringComparison.Ordinal) || operation == "Connect")
                        {
                            Assert.That(undone, Is.True, $"{where}: {undo} of what {operation} accepted");
                        }
                    }
                }
            }

            TestContext.Out.WriteLine($"{iterations} random endpoints x 4 calls: {tally}");
            StillCarriesData(Context, socket);
        }
        finally
        {
            Directory.Delete(ipcDirectory, recursive: true);
        }
    }

    private static void StillCarriesData(ZlinkContext context, ZlinkSocket socket)
    {
        using var peer = context.CreateSocket(socket.Type);
        if (socket.Type == ZlinkSocketType.Stream)
        {
            StreamSockets.ConnectOrIgnore(peer, StreamSockets.Bind(socket));
            RoutingId peerSide = StreamSockets.ReceiveEvent(peer, StreamSockets.Connected);
            StreamSockets.ReceiveEvent(socket, StreamSockets.Connected);
            StreamSockets.Send(peer, peerSide, Wait.Bytes("still here"));
            Assert.That(Wait.Text(StreamSockets.Receive(socket).Payload), Is.EqualTo("still here"));
            return;
        }

        peer.Connect(Endpoints.BindFresh(socket, "inproc"));
        Assert.That(peer.TrySend(Wait.Bytes("still here"), Wait.Long), Is.True);
        Assert.That(Wait.Text(Wait.Frame(socket)), Is.EqualTo("still here"));
    }

    /// <summary>A random endpoint of one of several shapes; none makes the library resolve a host name.</summary>
    private static string RandomEndpoint(Random random, string ipcDirectory, ZlinkSocketType type) => random.Next(6) switch
    {
        0 => RandomText.Any(random, random.Next(0, 300)),
        1 => "inproc://" + RandomText.Any(random, random.Next(0, 300)),
        2 => "tcp://" + LiteralHosts[random.Next(LiteralHosts.Length)] + ":" + NonNumericPort(random),
        3 => "tcp://" + (type == ZlinkSocketType.Stream ? RandomText.Valid(random, random.Next(0, 60)) : LiteralHosts[random.Next(LiteralHosts.Length)]) + ":" + NonNumericPort(random),
        4 => UnknownTransport(random) + "://" + RandomText.Any(random, random.Next(0, 60)),
        _ => "ipc://" + ipcDirectory + "/" + RandomText.Valid(random, random.Next(1, 150)),
    };

    private static string UnknownTransport(Random random)
    {
        string name = RandomLetters(random, random.Next(1, 12));
        return KnownTransports.Contains(name) ? "x" + name : name;
    }

    /// <summary>A port that is not a number (it starts with a letter and has no ':'), refused before any address lookup.</summary>
    private static string NonNumericPort(Random random) =>
        RandomLetters(random, 1) + RandomText.Valid(random, random.Next(0, 20)).Replace(':', '.');

    private static string RandomLetters(Random random, int count)
    {
        char[] letters = new char[count];
        for (int i = 0; i < count; i++)
        {
            letters[i] = (char)('a' + random.Next(26));
        }

        return new string(letters);
    }

    private static void Call(ZlinkSocket socket, string operation, string endpoint)
    {
        switch (operation)
        {
            case "Bind":
                socket.Bind(endpoint);
                break;
            case "Connect":
                socket.Connect(endpoint);
                break;
            case "Unbind":
                socket.Unbind(endpoint);
                break;
            default:
                socket.Disconnect(endpoint);
                break;
        }
    }
}
