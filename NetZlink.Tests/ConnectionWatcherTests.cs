// ZlinkSocket.WatchConnections: connection states from monitor events, with reasons; reconnects
// after a peer vanished and came back, dead-peer detection by ZMP heartbeats through a proxy that
// stalls, and a randomized sequence of peers vanishing and coming back whose invariant is that
// each connection's states alternate (never two Connected without a Disconnected between) and that
// every message sent on a connection seen Connected arrives.
using System.Text;

namespace NetZlink.Tests;

public sealed class ConnectionWatcherTests : ContextTest
{
    [Test, CancelAfter(60_000)]
    public void ADealerSeesTheRouterVanishAndComeBack_InOrder_AndMessagesFlowAgain()
    {
        var router = Context.CreateSocket(ZlinkSocketType.Router);
        string endpoint = Endpoints.BindFresh(router, "tcp");
        using var dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.ReconnectInterval = 50;
        dealer.ReconnectIntervalMax = 400;
        Assert.That((dealer.ReconnectInterval, dealer.ReconnectIntervalMax), Is.EqualTo((50, 400)));
        var log = new WatchLog(dealer.WatchConnections());
        dealer.Connect(endpoint);

        ConnectionStateChange connected = log.Until(ConnectionState.Connected);
        Assert.That(connected.Endpoint, Is.EqualTo(endpoint));
        dealer.Send("one"u8);
        Assert.That(Wait.Message(router)[1], Is.EqualTo("one"u8.ToArray()));

        router.Dispose();
        ConnectionStateChange lost = log.Until(ConnectionState.Disconnected);
        Assert.That(lost.Endpoint, Is.EqualTo(endpoint));
        Assert.That(lost.Reason, Is.EqualTo(DisconnectReason.TransportError), lost.ToString());
        ConnectionStateChange retrying = log.Until(ConnectionState.Retrying);
        Assert.That(retrying.RetryValue, Is.InRange(50, 400 + 50), "the retry's interval, ms (RECONNECT_IVL with its random part, at most RECONNECT_IVL_MAX's)");

        using var again = Context.CreateSocket(ZlinkSocketType.Router);
        again.Bind(endpoint);
        log.Until(ConnectionState.Connected);
        dealer.Send("two"u8);
        Assert.That(Wait.Message(again)[1], Is.EqualTo("two"u8.ToArray()));

        dealer.Dispose();
        log.Until(ConnectionState.Closed);
        Assert.That(log.Watcher.Changes.Completion.Wait(Wait.Long), Is.True, "the channel completes after Closed");
        TestContext.Out.WriteLine(string.Join("\n", log.Seen));

        // The order: anything before the first Connected is Connecting or Retrying; Disconnected comes
        // only after a Connected; after it, only Connecting or Retrying until the next Connected.
        States.AssertConnectOrder(log.Seen, endpoint);
        Assert.That(log.Seen.Count(c => c.State == ConnectionState.Connected), Is.EqualTo(2));
        Assert.That(log.Seen[^1].State, Is.EqualTo(ConnectionState.Closed));
        Assert.That(log.Seen[^1].Endpoint, Is.Empty, "Closed is about no connection: its Endpoint is empty, as documented");
        Assert.That(log.Seen[^1].ToString(), Is.EqualTo("Closed"));
    }

    [Test, CancelAfter(60_000)]
    public void ARouterSeesEachDealerConnectAndGo_WithItsRoutingIdAndReason()
    {
        using var router = Context.CreateSocket(ZlinkSocketType.Router);
        string endpoint = Endpoints.BindFresh(router, "tcp");
        var log = new WatchLog(router.WatchConnections());
        var dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.SetOption(SocketOption.RoutingId, "peer-1"u8);
        dealer.Connect(endpoint);

        ConnectionStateChange up = log.Until(ConnectionState.Connected);
        Assert.That(up.RoutingId.Span.ToArray(), Is.EqualTo("peer-1"u8.ToArray()));
        Assert.That(up.Endpoint, Does.StartWith("tcp://127.0.0.1:"));
        dealer.Dispose();
        ConnectionStateChange down = log.Until(ConnectionState.Disconnected);
        Assert.That(down.RoutingId.Span.ToArray(), Is.EqualTo("peer-1"u8.ToArray()));
        Assert.That(down.Endpoint, Is.EqualTo(up.Endpoint));
        Assert.That(down.Reason, Is.EqualTo(DisconnectReason.TransportError), "the peer went after its handshake: zlink 1.3's TRANSPORT_ERROR");
        log.Watcher.Dispose();
        log.Until(ConnectionState.Closed);
        log.Watcher.Dispose();
        Assert.That(log.Watcher.IsClosed, Is.True);
    }

    [Test, CancelAfter(60_000)]
    public void AConnectionThatFailsItsHandshake_IsDisconnectedWithHandshakeFailed_NeverConnected()
    {
        using var router = Context.CreateSocket(ZlinkSocketType.Router);
        string endpoint = Endpoints.BindFresh(router, "tcp");
        using var proxy = new StallingProxy(endpoint);
        proxy.Stall();
        using var dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.SetOption(SocketOption.HandshakeInterval, 200);
        var log = new WatchLog(dealer.WatchConnections());
        dealer.Connect(proxy.Endpoint);

        ConnectionStateChange failed = log.Until(ConnectionState.Disconnected);
        Assert.That(failed.Reason, Is.EqualTo(DisconnectReason.HandshakeFailed), failed.ToString());
        Assert.That(failed.HandshakeFailure, Does.StartWith("HandshakeFailedNoDetail"), "the monitor's handshake failure goes with the Disconnected");
        Assert.That(log.Seen.Any(c => c.State == ConnectionState.Connected), Is.False);

        proxy.Resume();
        log.Until(ConnectionState.Connected);
        States.AssertConnectOrder(log.Seen, proxy.Endpoint);
    }

    [Test, CancelAfter(90_000)]
    public void HeartbeatsDeclareAStalledPeerDead_AndTheSocketReconnectsWhenItResumes()
    {
        using var router = Context.CreateSocket(ZlinkSocketType.Router);
        string endpoint = Endpoints.BindFresh(router, "tcp");
        using var proxy = new StallingProxy(endpoint);
        var routerLog = new WatchLog(router.WatchConnections());

        // Two dealers through the same proxy: one with heartbeats, one without (the control).
        // A DEALER keeps its routing id (16 random bytes) across reconnects, and the router, which has
        // no heartbeats and reads nothing meanwhile, still holds the dead connection under that id when
        // the new one arrives: without ROUTER_HANDOVER it would refuse the new one (see docs/binding.md).
        router.SetOption(SocketOption.RouterHandover, 1);
        using var beating = Context.CreateSocket(ZlinkSocketType.Dealer);
        beating.HeartbeatInterval = 100;
        beating.HeartbeatTimeout = 500;
        beating.HeartbeatTtl = 2000;
        beating.SetOption(SocketOption.HandshakeInterval, 500);
        beating.ReconnectInterval = 50;
        Assert.That((beating.HeartbeatInterval, beating.HeartbeatTimeout, beating.HeartbeatTtl), Is.EqualTo((100, 500, 2000)));
        using var silent = Context.CreateSocket(ZlinkSocketType.Dealer);
        var beatingLog = new WatchLog(beating.WatchConnections());
        var silentLog = new WatchLog(silent.WatchConnections());
        beating.Connect(proxy.Endpoint);
        silent.Connect(proxy.Endpoint);
        beatingLog.Until(ConnectionState.Connected);
        silentLog.Until(ConnectionState.Connected);
        beating.Send("beating:before"u8);
        silent.Send("silent:before"u8);
        var received = new HashSet<string> { Text(Wait.Message(router)), Text(Wait.Message(router)) };
        Assert.That(received, Is.EquivalentTo(new[] { "beating:before", "silent:before" }));

        proxy.Stall();
        ConnectionStateChange dead = beatingLog.Until(ConnectionState.Disconnected);
        Assert.That(dead.Reason, Is.EqualTo(DisconnectReason.TransportError), "a heartbeat timeout ends the connection as a transport error (zlink 1.3's rule)");
        silent.Send("silent:held"u8);
        silentLog.Drain();
        Assert.That(silentLog.Seen.Any(c => c.State == ConnectionState.Disconnected), Is.False,
            "without heartbeats nothing notices the stalled peer (its TCP connection is open)");

        proxy.Resume();
        beatingLog.Until(ConnectionState.Connected);
        beating.Send("beating:after"u8);
        received = [Text(Wait.Message(router)), Text(Wait.Message(router))];
        Assert.That(received, Is.EquivalentTo(new[] { "beating:after", "silent:held" }));
        Assert.That(received, Is.EquivalentTo(new[] { "beating:after", "silent:held" }));
        TestContext.Out.WriteLine(string.Join("\n", beatingLog.Seen) + "\nthe router's view:\n" + string.Join("\n", routerLog.Drain()));
        States.AssertConnectOrder(beatingLog.Seen, proxy.Endpoint);
    }

    [Test, CancelAfter(60_000)]
    public void AProtocolError_EndsBothSidesWithHandshakeFailed_AndTheSenderComesBack()
    {
        using var receiver = Context.CreateSocket(ZlinkSocketType.Router);
        receiver.MaxMessageSize = 64;
        receiver.SetOption(SocketOption.RouterHandover, 1); // the sender comes back under its routing id
        string endpoint = Endpoints.BindFresh(receiver, "tcp");
        using var sender = Context.CreateSocket(ZlinkSocketType.Dealer);
        sender.ReconnectInterval = 20;
        var receiverLog = new WatchLog(receiver.WatchConnections());
        var senderLog = new WatchLog(sender.WatchConnections());
        sender.Connect(endpoint);
        senderLog.Until(ConnectionState.Connected);
        receiverLog.Until(ConnectionState.Connected);

        sender.Send(new byte[65]); // over the receiver's MAXMSGSIZE: it sends a ZMP ERROR and drops the connection
        ConnectionStateChange dropped = receiverLog.Until(ConnectionState.Disconnected);
        ConnectionStateChange told = senderLog.Until(ConnectionState.Disconnected);
        Assert.That(dropped.Reason, Is.EqualTo(DisconnectReason.HandshakeFailed), "the side that found the protocol error (zlink 1.3's rule)");
        Assert.That(told.Reason, Is.EqualTo(DisconnectReason.HandshakeFailed), "the side that received the peer's ERROR (zlink 1.3's rule)");

        senderLog.Until(ConnectionState.Connected);
        sender.Send("small"u8);
        Assert.That(Wait.Message(receiver)[1], Is.EqualTo("small"u8.ToArray()));
        States.AssertConnectOrder(senderLog.Seen, endpoint);
    }

    [Test, CancelAfter(30_000)]
    public void DisposingTheContext_EndsTheWatchWithClosed()
    {
        var context = new ZlinkContext();
        var socket = context.CreateSocket(ZlinkSocketType.Dealer);
        var log = new WatchLog(socket.WatchConnections());
        context.Dispose();
        log.Until(ConnectionState.Closed);
        Assert.That(log.Watcher.Changes.Completion.Wait(Wait.Long), Is.True);
        Assert.Throws<ObjectDisposedException>(() => socket.WatchConnections());
    }

    [Test, CancelAfter(300_000)]
    public void RandomPeersVanishAndComeBack_StatesAlternatePerConnection_AndNoMessageIsLost()
    {
        Random random = Fuzz.Random(out _);
        int steps = Fuzz.Iterations(40);
        const int PeerCount = 4;
        using var router = Context.CreateSocket(ZlinkSocketType.Router);
        router.SetOption(SocketOption.RouterMandatory, 1);
        // A peer comes back under its id as soon as the router's monitor said the last life ended; the
        // router's own table may still hold that life then (it lets go of a connection inside its calls),
        // and without ROUTER_HANDOVER it would refuse the new one while the watcher reports it Connected.
        router.SetOption(SocketOption.RouterHandover, 1);
        string endpoint = Endpoints.BindFresh(router, "tcp");
        var log = new WatchLog(router.WatchConnections());

        var peers = new ZlinkSocket?[PeerCount];
        var lives = new int[PeerCount];
        var sent = new HashSet<string>();
        var received = new HashSet<string>();
        var up = new bool[PeerCount]; // the router saw this peer's current life Connected
        int sequence = 0;

        string Id(int i) => $"peer-{i}";
        void Receive(TimeSpan timeout)
        {
            var parts = new List<byte[]>();
            while (router.TryReceiveMultipart(parts, timeout))
            {
                Assert.That(parts, Has.Count.EqualTo(2), "[routing id][body]");
                string message = $"{Encoding.ASCII.GetString(parts[0])}|{Encoding.ASCII.GetString(parts[1])}";
                Assert.That(received.Add(message), Is.True, $"{message} arrived twice");
                parts.Clear();
                timeout = TimeSpan.Zero;
            }
        }

        void Follow()
        {
            // Applies what the watcher reported so far to the model.
            foreach (ConnectionStateChange change in log.Drain())
            {
                int i = Array.IndexOf(Enumerable.Range(0, PeerCount).Select(Id).ToArray(), Encoding.ASCII.GetString(change.RoutingId.Span));
                if (change.State == ConnectionState.Connected)
                {
                    Assert.That(up[i], Is.False, $"{Id(i)} Connected twice without a Disconnected");
                    up[i] = true;
                }
                else if (change.State == ConnectionState.Disconnected)
                {
                    Assert.That(up[i], Is.True, $"{Id(i)} Disconnected without a Connected");
                    Assert.That(change.Reason, Is.EqualTo(DisconnectReason.TransportError), change.ToString());
                    up[i] = false;
                }
            }
        }

        for (int step = 0; step < steps; step++)
        {
            int i = random.Next(PeerCount);
            if (peers[i] is null)
            {
                // Comes back (a new socket under the same id) once the router has seen its last life end.
                Wait.Until(() => { Follow(); return !up[i]; }, $"{Id(i)}'s Disconnected");
                var dealer = Context.CreateSocket(ZlinkSocketType.Dealer);
                dealer.SetOption(SocketOption.RoutingId, Encoding.ASCII.GetBytes(Id(i)));
                dealer.Connect(endpoint);
                peers[i] = dealer;
                lives[i]++;
                TestContext.Out.WriteLine($"step {step}: {Id(i)} comes (life {lives[i]})");
            }
            else if (random.Next(3) == 0)
            {
                // Vanishes, once everything it sent arrived (a send on a live connection is never lost).
                Wait.Until(() => { Receive(TimeSpan.FromMilliseconds(5)); return sent.IsSubsetOf(received); }, "every message sent to arrive");
                peers[i]!.Dispose();
                peers[i] = null;
                TestContext.Out.WriteLine($"step {step}: {Id(i)} vanishes");
            }
            else
            {
                // Sends, once the router saw it Connected; the router answers and the peer reads the answer.
                Wait.Until(() => { Follow(); return up[i]; }, $"{Id(i)}'s Connected");
                string body = $"m{sequence++}";
                peers[i]!.Send(Encoding.ASCII.GetBytes(body));
                sent.Add($"{Id(i)}|{body}");
                router.SendMore(Encoding.ASCII.GetBytes(Id(i)));
                router.Send(Encoding.ASCII.GetBytes("re-" + body));
                Assert.That(Encoding.ASCII.GetString(Wait.Frame(peers[i]!)), Is.EqualTo("re-" + body));
            }

            Follow();
            Receive(TimeSpan.Zero);
        }

        Wait.Until(() => { Receive(TimeSpan.FromMilliseconds(5)); return sent.IsSubsetOf(received); }, "every message sent to arrive");
        for (int i = 0; i < PeerCount; i++)
        {
            peers[i]?.Dispose();
        }

        Wait.Until(() => { Follow(); return !up.Any(u => u); }, "every peer's last Disconnected");
        var perId = log.Seen.Where(c => c.State == ConnectionState.Connected).GroupBy(c => Encoding.ASCII.GetString(c.RoutingId.Span)).ToDictionary(g => g.Key, g => g.Count());
        for (int i = 0; i < PeerCount; i++)
        {
            Assert.That(perId.GetValueOrDefault(Id(i)), Is.EqualTo(lives[i]), $"{Id(i)}: one Connected per life");
        }

        // Per connection (the peer's address): exactly one Connected, then one Disconnected.
        foreach (var connection in log.Seen.Where(c => c.State is ConnectionState.Connected or ConnectionState.Disconnected).GroupBy(c => c.Endpoint))
        {
            Assert.That(connection.Select(c => c.State), Is.EqualTo(new[] { ConnectionState.Connected, ConnectionState.Disconnected }), connection.Key);
        }

        Assert.That(received, Is.EquivalentTo(sent));
        TestContext.Out.WriteLine($"{steps} steps, {lives.Sum()} lives, {sent.Count} messages, {log.Seen.Count} changes");
    }

    private static string Text(List<byte[]> message) => Encoding.ASCII.GetString(message[^1]);

    /// <summary>Reads a watcher's changes with deadlines and keeps every one.</summary>
    private sealed class WatchLog(ZlinkConnectionWatcher watcher)
    {
        public ZlinkConnectionWatcher Watcher { get; } = watcher;

        public List<ConnectionStateChange> Seen { get; } = [];

        public ConnectionStateChange Until(ConnectionState state)
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
            deadline.CancelAfter(Wait.Long);
            while (true)
            {
                ConnectionStateChange change;
                try
                {
                    change = Watcher.Changes.ReadAsync(deadline.Token).AsTask().GetAwaiter().GetResult();
                }
                catch (OperationCanceledException)
                {
                    Assert.Fail($"no {state} change came; seen: {string.Join(", ", Seen)}");
                    throw;
                }

                Seen.Add(change);
                if (change.State == state)
                {
                    return change;
                }
            }
        }

        /// <summary>The changes written so far (also kept in <see cref="Seen"/>).</summary>
        public List<ConnectionStateChange> Drain()
        {
            var now = new List<ConnectionStateChange>();
            while (Watcher.Changes.TryRead(out ConnectionStateChange change))
            {
                now.Add(change);
            }

            Seen.AddRange(now);
            return now;
        }
    }

    private static class States
    {
        /// <summary>
        /// The connect side's order for one endpoint: Connecting and Retrying any time while not
        /// connected; Connected only when not connected; Disconnected after a Connected (or after a
        /// connection that never finished its handshake: then HandshakeFailed); Closed last.
        /// </summary>
        public static void AssertConnectOrder(List<ConnectionStateChange> seen, string endpoint)
        {
            bool connected = false;
            for (int k = 0; k < seen.Count; k++)
            {
                ConnectionStateChange c = seen[k];
                string where = $"change {k} ({c}) of: {string.Join(", ", seen)}";
                switch (c.State)
                {
                    case ConnectionState.Connecting or ConnectionState.Retrying:
                        Assert.That(connected, Is.False, where);
                        Assert.That(c.Endpoint, Is.EqualTo(endpoint), where);
                        break;
                    case ConnectionState.Connected:
                        Assert.That(connected, Is.False, where);
                        connected = true;
                        break;
                    case ConnectionState.Disconnected:
                        Assert.That(connected || c.Reason == DisconnectReason.HandshakeFailed, Is.True, where);
                        connected = false;
                        break;
                    case ConnectionState.Closed:
                        Assert.That(k, Is.EqualTo(seen.Count - 1), where);
                        break;
                }
            }
        }
    }
}
