// zlink_services_peer, managed: the same roles, arguments and output lines as
// native/tests/interop/zlink_services_peer.c, on whatever library NetZlink loads.
//   registry <pub> <router> <heartbeat_timeout_ms> <broadcast_ms> <seconds> [peer_pub...]
//   receiver <registry_router> <bind> <service> <weight> <seconds>
//   gateway  <registry_pub> <service> <count> <seconds>
//   spot     <registry_router> <registry_pub> <bind> <count> <seconds>
//   bench-gateway <count> <size>, bench-spot <count> <size>: the figures (as the C peer's), after
//   WarmUpMs of the same loop unmeasured
//   binding-gateway <transport> <size>, binding-spot <transport> <size>: the shapes of zlink's own
//   .NET binding benchmark (BindingBench.cs)
using System.Diagnostics;
using System.Globalization;
using System.Text;
using NetZlink;
using NetZlink.Services;

// How long the bench-* roles run their measured loop unmeasured first.
const int WarmUpMs = 300;
const string Usage = "usage: registry|receiver|gateway|spot ... | bench-gateway|bench-spot <count> <size> | binding-gateway|binding-spot <tcp|ipc|inproc> <size>";

try
{
    return args.Length == 0 ? Fail(Usage) : args[0] switch
    {
        "registry" => await Registry(args),
        "receiver" => await Receiver(args),
        "gateway" => await Gateway(args),
        "spot" => await Spot(args),
        "bench-gateway" => await BenchGateway(Int(args[1]), Int(args[2])),
        "bench-spot" => await BenchSpot(Int(args[1]), Int(args[2])),
        "binding-gateway" or "binding-spot" when args.Length != 3 || !int.TryParse(args[2], NumberStyles.None, CultureInfo.InvariantCulture, out int size) || size < 1 =>
            Fail($"usage: {args[0]} <tcp|ipc|inproc> <size: bytes, 1 or more>"),
        "binding-gateway" => await BindingBench.Gateway(args[1], Int(args[2])),
        "binding-spot" => await BindingBench.Spot(args[1], Int(args[2])),
        _ => Fail($"unknown role {args[0]}; {Usage}"),
    };
}
catch (Exception e) when (e is not OutOfMemoryException)
{
    return Fail($"{e.GetType().Name}: {e.Message}");
}

static int Fail(string why)
{
    Console.WriteLine("FAIL " + why);
    return 1;
}

static int Int(string s) => int.Parse(s, CultureInfo.InvariantCulture);

// Ends when the time passes or stdin closes (the test's end signal).
static async Task RunUntil(double seconds)
{
    using var time = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
    Task stdin = Task.Run(() =>
    {
        while (Console.In.ReadLine() is not null)
        {
        }
    });
    await Task.WhenAny(stdin, Task.Delay(Timeout.Infinite, time.Token).ContinueWith(_ => { }, TaskScheduler.Default));
}

static async Task<int> Registry(string[] a)
{
    using var context = new ZlinkContext();
    var options = new RegistryOptions
    {
        PubEndpoint = a[1],
        RouterEndpoint = a[2],
        HeartbeatInterval = TimeSpan.FromMilliseconds(100),
        HeartbeatTimeout = TimeSpan.FromMilliseconds(Int(a[3])),
        BroadcastInterval = TimeSpan.FromMilliseconds(Int(a[4])),
    };
    foreach (string peer in a.Skip(6))
    {
        options.Peers.Add(peer);
    }

    await using (var registry = new ZlinkRegistry(context, options))
    {
        Console.WriteLine($"READY registry on {ZlinkLibrary.LoadedFrom}");
        await RunUntil(Int(a[5]));
        if (registry.RefusedMessages != 0)
        {
            return Fail($"registry refused {registry.RefusedMessages}: {registry.LastRefusal}");
        }
    }

    Console.WriteLine("PASS registry");
    return 0;
}

static async Task<int> Receiver(string[] a)
{
    using var context = new ZlinkContext();
    await using var receiver = new ZlinkReceiver(context, new ReceiverOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(100) });
    receiver.Bind(a[2]);
    await receiver.ConnectRegistryAsync(a[1]);
    using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(10));
    await receiver.RegisterAsync(a[3], weight: (uint)Int(a[4]), cancellationToken: patience.Token);
    Console.WriteLine($"READY receiver on {ZlinkLibrary.LoadedFrom}");
    long answered = 0;
    using var stop = new CancellationTokenSource();
    Task echo = Task.Run(async () =>
    {
        try
        {
            while (true)
            {
                using ServiceMessage m = await receiver.ReceiveAsync(stop.Token);
                byte[] answer = [.. "mgd:"u8, .. m[0]];
                if (!receiver.Send(m.Peer, answer))
                {
                    Console.WriteLine("FAIL an answer to a gateway that is not connected");
                }

                Interlocked.Increment(ref answered);
            }
        }
        catch (OperationCanceledException)
        {
        }
    });
    await RunUntil(Int(a[5]));
    await stop.CancelAsync();
    await echo;
    Console.WriteLine($"PASS receiver answered {Interlocked.Read(ref answered)}");
    return 0;
}

static async Task<int> Gateway(string[] a)
{
    string service = a[2];
    int count = Int(a[3]);
    using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(Int(a[4])));
    using var context = new ZlinkContext();
    await using var discovery = new ZlinkDiscovery(context);
    await discovery.ConnectRegistryAsync(a[1]);
    IReadOnlyList<ReceiverInfo> receivers = await discovery.WaitForAsync(service, r => r.Count > 0, deadline.Token);
    await using var gateway = new ZlinkGateway(context, discovery);
    Console.WriteLine($"READY gateway {receivers.Count} receivers on {ZlinkLibrary.LoadedFrom}");
    for (int i = 0; i < count; i++)
    {
        await gateway.SendAsync(service, Encoding.UTF8.GetBytes($"req-{i}"), deadline.Token);
    }

    var seen = new HashSet<int>();
    var clock = Stopwatch.StartNew();
    while (seen.Count < count)
    {
        using ServiceMessage reply = await gateway.ReceiveAsync(deadline.Token);
        string text = Encoding.UTF8.GetString(reply[0]);
        int at = text.IndexOf("req-", StringComparison.Ordinal);
        if (reply.Service != service || at < 0 || !seen.Add(Int(text[(at + 4)..])))
        {
            return Fail($"unexpected or repeated reply '{text}' from service '{reply.Service}'");
        }
    }

    Console.WriteLine($"PASS gateway {seen.Count} replies in {clock.ElapsedMilliseconds} ms");
    return 0;
}

// The SPOT role of zlink_services_peer.c: subscribes to net.exact, net.sync, net.end and net.pat:*, reports
// SYNC and GOT; publishes ref.sync until "GO" on stdin, then the batch and ref.end.
static async Task<int> Spot(string[] a)
{
    int count = Int(a[4]);
    using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(Int(a[5])));
    using var context = new ZlinkContext();
    await using var node = new ZlinkSpotNode(context, new SpotNodeOptions { HeartbeatInterval = TimeSpan.FromMilliseconds(100) });
    node.Bind(a[3]);
    await node.ConnectRegistryAsync(a[1]);
    await node.RegisterAsync(cancellationToken: deadline.Token);
    await using var discovery = new ZlinkDiscovery(context, ServiceType.Spot);
    await discovery.ConnectRegistryAsync(a[2]);
    await node.SetDiscoveryAsync(discovery);
    using ZlinkSpotPublisher pub = node.CreatePublisher();
    await using ZlinkSpotSubscriber sub = node.CreateSubscriber();
    sub.Subscribe("net.exact");
    sub.Subscribe("net.sync");
    sub.Subscribe("net.end");
    sub.SubscribePattern("net.pat:*");
    Console.WriteLine($"READY spot {a[3]} on {ZlinkLibrary.LoadedFrom}");

    long exact = 0, pattern = 0, other = 0;
    bool ended = false;
    Task reader = Task.Run(async () =>
    {
        bool synced = false;
        await foreach (SpotMessage m in sub.Messages.ReadAllAsync(deadline.Token))
        {
            using (m)
            {
                string body = Encoding.UTF8.GetString(m[0]);
                switch (m.Topic)
                {
                    case "net.sync":
                        if (!synced)
                        {
                            synced = true;
                            Console.WriteLine("SYNC");
                        }

                        break;
                    case "net.end":
                        ended = true;
                        Console.WriteLine($"GOT exact={exact} pattern={pattern} other={other}");
                        return;
                    case "net.exact" when m.PartCount == 1 && body == $"e-{exact}":
                        exact++;
                        break;
                    case var t when t == $"net.pat:{pattern}" && m.PartCount == 1 && body == $"p-{pattern}":
                        pattern++;
                        break;
                    default:
                        Console.WriteLine($"OTHER {m.Topic} {body}");
                        other++;
                        break;
                }
            }
        }
    });

    using var go = new CancellationTokenSource();
    Task syncing = Task.Run(async () =>
    {
        while (!go.IsCancellationRequested)
        {
            pub.Publish("ref.sync", "sync"u8);
            await Task.Delay(20, CancellationToken.None);
        }
    });

    while (await Console.In.ReadLineAsync(deadline.Token) is { } line)
    {
        if (line == "GO" && !go.IsCancellationRequested)
        {
            await go.CancelAsync();
            await syncing;
            for (int i = 0; i < count; i++)
            {
                pub.Publish("ref.exact", Encoding.UTF8.GetBytes($"e-{i}"));
                pub.Publish($"ref.pat:{i}", Encoding.UTF8.GetBytes($"p-{i}"));
                pub.Publish("ref.nope", Encoding.UTF8.GetBytes($"x-{i}"));
            }

            pub.Publish("ref.end", "end"u8);
            Console.WriteLine($"SENT {count}");
        }
    }

    await go.CancelAsync();
    await syncing;
    await Task.WhenAny(reader, Task.Delay(2000, CancellationToken.None));
    if (!Volatile.Read(ref ended) || exact != count || pattern != count || other != 0)
    {
        return Fail($"spot got exact={exact} pattern={pattern} other={other} of {count} (end {(ended ? "seen" : "not seen")})");
    }

    await reader;
    if (node.RefusedMessages != 0)
    {
        return Fail($"spot node refused {node.RefusedMessages}: {node.LastRefusal}");
    }

    Console.WriteLine("PASS spot");
    return 0;
}

// The bench's earlier shape: ReceiveAsync on thread-pool tasks instead of TryReceive on threads of their own.
static bool Async() => Environment.GetEnvironmentVariable("NETZLINK_BENCH_ASYNC") == "1";

// Runs work on a thread of its own (a dedicated thread, as zlink's bench uses).
static Task OnThread(Action work)
{
    var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
    new Thread(() =>
    {
        try
        {
            work();
            done.SetResult();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            done.SetException(e);
        }
    }) { IsBackground = true }.Start();
    return done.Task;
}

static string Result(string shape, double rate, List<double> rttUs)
{
    rttUs.Sort();
    return string.Create(CultureInfo.InvariantCulture,
        $"RESULT {shape} msgs_per_s={rate:F0} rtt_p50_us={rttUs[rttUs.Count / 2]:F1} rtt_p99_us={rttUs[rttUs.Count * 99 / 100]:F1}");
}

// As run_bench_gateway in zlink_services_peer.c: registry, echo receiver, discovery + gateway in
// one process; <count> requests with up to 256 in flight, then 2,000 one at a time.
static async Task<int> BenchGateway(int count, int size)
{
    using var context = new ZlinkContext();
    await using var registry = new ZlinkRegistry(context, new RegistryOptions { PubEndpoint = "tcp://127.0.0.1:*", RouterEndpoint = "tcp://127.0.0.1:*" });
    await using var receiver = new ZlinkReceiver(context);
    receiver.Bind("tcp://127.0.0.1:*");
    await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
    await receiver.RegisterAsync("bench");
    using var stop = new CancellationTokenSource();
    // zlink's shape (its bench echoes on a thread of its own and reads the answers on the bench's
    // thread, blocking): TryReceive on dedicated threads. NETZLINK_BENCH_ASYNC=1: the earlier
    // shape, ReceiveAsync on thread-pool tasks.
    Task echo = Async() ? Task.Run(async () =>
    {
        try
        {
            while (true)
            {
                using ServiceMessage m = await receiver.ReceiveAsync(stop.Token);
                receiver.Send(m.Peer, m[0]);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }) : OnThread(() =>
    {
        while (!stop.IsCancellationRequested)
        {
            if (receiver.TryReceive(TimeSpan.FromMilliseconds(50), out ServiceMessage? m))
            {
                using (m)
                {
                    receiver.Send(m.Peer, m[0]);
                }
            }
        }
    });
    await using var discovery = new ZlinkDiscovery(context);
    await discovery.ConnectRegistryAsync(registry.PubEndpoint);
    await using var gateway = new ZlinkGateway(context, discovery);
    byte[] payload = new byte[size];
    Array.Fill(payload, (byte)'x');
    for (int i = 0; i < 100; i++)
    {
        await gateway.SendAsync("bench", payload);
        (await gateway.ReceiveAsync()).Dispose();
    }

    // Then the throughput loop itself, unmeasured, for WarmUpMs: the JIT's tiering brings the
    // managed code to its steady state (a C peer has nothing to warm).
    for (var warm = Stopwatch.StartNew(); Async() && warm.ElapsedMilliseconds < WarmUpMs;)
    {
        await Pipelined(Math.Min(count, 10_000));
    }

    double rate = 0;
    var rtt = new List<double>(2000);
    if (Async())
    {
        var clock = Stopwatch.StartNew();
        await Pipelined(count);
        rate = count / clock.Elapsed.TotalSeconds;
        for (int i = 0; i < 2000; i++)
        {
            long t0 = Stopwatch.GetTimestamp();
            await gateway.SendAsync("bench", payload);
            (await gateway.ReceiveAsync()).Dispose();
            rtt.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
        }
    }
    else
    {
        await OnThread(() =>
        {
            for (var warm = Stopwatch.StartNew(); warm.ElapsedMilliseconds < WarmUpMs;)
            {
                PipelinedOnThread(Math.Min(count, 10_000));
            }

            var clock = Stopwatch.StartNew();
            PipelinedOnThread(count);
            rate = count / clock.Elapsed.TotalSeconds;
            for (int i = 0; i < 2000; i++)
            {
                long t0 = Stopwatch.GetTimestamp();
                Send();
                Answer().Dispose();
                rtt.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            }
        });
    }

    Console.WriteLine(Result("gateway", rate, rtt));

    void Send()
    {
        for (int delay = 1; !gateway.TrySend("bench", payload); delay = Math.Min(delay * 2, 50))
        {
            Thread.Sleep(delay);
        }
    }

    ServiceMessage Answer() => gateway.TryReceive(TimeSpan.FromSeconds(5), out ServiceMessage? m) ? m : throw new TimeoutException("no answer within 5 s");

    void PipelinedOnThread(int n)
    {
        int sent = 0, got = 0;
        while (got < n)
        {
            while (sent < n && sent - got < 256)
            {
                Send();
                sent++;
            }

            Answer().Dispose();
            got++;
        }
    }

    async Task Pipelined(int n)
    {
        int sent = 0, got = 0;
        while (got < n)
        {
            while (sent < n && sent - got < 256)
            {
                await gateway.SendAsync("bench", payload);
                sent++;
            }

            (await gateway.ReceiveAsync()).Dispose();
            got++;
        }
    }
    await stop.CancelAsync();
    await echo;
    return 0;
}

// As run_bench_spot: two nodes, A's PUB to B's SUB; <count> publishes received by a task on B,
// then 2,000 ping-pongs through B.
static async Task<int> BenchSpot(int count, int size)
{
    using var context = new ZlinkContext();
    var options = new SpotNodeOptions { PublishHighWaterMark = 0, SubscribeHighWaterMark = 0, SubscriberCapacity = count + 1000 };
    await using var a = new ZlinkSpotNode(context, options);
    await using var b = new ZlinkSpotNode(context, options);
    a.Bind("tcp://127.0.0.1:*");
    b.Bind("tcp://127.0.0.1:*");
    await b.ConnectPeerAsync(a.BoundEndpoint!);
    await a.ConnectPeerAsync(b.BoundEndpoint!);
    using ZlinkSpotPublisher apub = a.CreatePublisher();
    using ZlinkSpotPublisher bpub = b.CreatePublisher();
    await using ZlinkSpotSubscriber bsub = b.CreateSubscriber();
    await using ZlinkSpotSubscriber asub = a.CreateSubscriber();
    bsub.Subscribe("bench");
    bsub.Subscribe("ping");
    asub.Subscribe("pong");
    long received = 0;
    using var stop = new CancellationTokenSource();
    Task consumer = Async() ? Task.Run(async () =>
    {
        try
        {
            await foreach (SpotMessage m in bsub.Messages.ReadAllAsync(stop.Token))
            {
                Consume(m);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }) : OnThread(() =>
    {
        // As zlink's bench: the consumer on a thread of its own.
        while (!stop.IsCancellationRequested)
        {
            if (bsub.TryReceive(TimeSpan.FromMilliseconds(50), out SpotMessage m))
            {
                Consume(m);
            }
        }
    });

    void Consume(SpotMessage m)
    {
        using (m)
        {
            if (m.Topic == "ping")
            {
                bpub.Publish("pong", m[0]);
            }
            else
            {
                Interlocked.Increment(ref received);
            }
        }
    }

    byte[] payload = new byte[size];
    Array.Fill(payload, (byte)'x');
    while (Interlocked.Read(ref received) == 0)
    {
        apub.Publish("bench", payload);
        await Task.Delay(10);
    }

    await Task.Delay(100);
    // The measured shape, unmeasured, for WarmUpMs first (the JIT's tiering; see BenchGateway).
    for (var warm = Stopwatch.StartNew(); warm.ElapsedMilliseconds < WarmUpMs;)
    {
        if (!await Burst(Math.Min(count, 10_000)))
        {
            return Fail("spot bench: the warm-up's publishes did not all arrive");
        }
    }

    var clock = Stopwatch.StartNew();
    if (!await Burst(count))
    {
        return Fail($"spot bench: not all of {count} arrived within 60 s");
    }

    double rate = count / clock.Elapsed.TotalSeconds;
    var rtt = new List<double>(2000);
    // The first ping waits for the pong subscription to reach B.
    using (var first = new CancellationTokenSource(TimeSpan.FromSeconds(30)))
    {
        while (true)
        {
            apub.Publish("ping", payload);
            using var poll = CancellationTokenSource.CreateLinkedTokenSource(first.Token);
            poll.CancelAfter(50);
            try
            {
                (await asub.ReceiveAsync(poll.Token)).Dispose();
                break;
            }
            catch (OperationCanceledException) when (!first.IsCancellationRequested)
            {
            }
        }
    }

    await Task.Delay(100);
    while (asub.Messages.TryRead(out SpotMessage extra))
    {
        extra.Dispose();
    }

    for (int i = 0; i < 2000; i++)
    {
        long t0 = Stopwatch.GetTimestamp();
        apub.Publish("ping", payload);
        if (Async())
        {
            (await asub.ReceiveAsync()).Dispose();
        }
        else if (asub.TryReceive(TimeSpan.FromSeconds(5), out SpotMessage pong))
        {
            pong.Dispose();
        }
        else
        {
            return Fail("spot bench: no pong within 5 s");
        }

        rtt.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
    }

    Console.WriteLine(Result("spot", rate, rtt));

    // Publishes n on A and waits until B's task counted them all (false: not within 60 s).
    async Task<bool> Burst(int n)
    {
        long start = Interlocked.Read(ref received);
        var time = Stopwatch.StartNew();
        for (int i = 0; i < n; i++)
        {
            apub.Publish("bench", payload);
        }

        while (Interlocked.Read(ref received) < start + n)
        {
            if (time.Elapsed > TimeSpan.FromSeconds(60))
            {
                return false;
            }

            await Task.Delay(1);
        }

        return true;
    }
    await stop.CancelAsync();
    await consumer;
    return 0;
}
