// The shapes of zlink's own .NET binding benchmark for its services (its GATEWAY and SPOT patterns),
// written here over NetZlink's API, with the same counts, the same order of phases and the same
// output lines, so the two can run side by side (scripts/services-bench-binding.sh):
//   GATEWAY: a registry on inproc endpoints, a receiver bound on <transport>, a discovery and a
//     gateway; 200 warm-up requests, then 200 one at a time (latency: their mean, one way: the
//     gateway's send to the receiver's receive), then <count> requests sent by the gateway while
//     another thread receives them at the receiver (throughput: one way).
//   SPOT: two nodes, the publisher's node bound on <transport> and the subscriber's node connected to
//     it; 200 warm-up publishes, 200 one at a time (mean latency), then min(<count>, 50,000)
//     publishes received by another thread.
// Counts: BENCH_MSG_COUNT (default 200,000 at 1 KiB or less, else 20,000), BENCH_WARMUP_COUNT (200),
// BENCH_LAT_COUNT (200), BENCH_SPOT_MSG_COUNT_MAX (50,000), as theirs. Output:
//   RESULT,current,<PATTERN>,<transport>,<size>,throughput,<msgs/s>
//   RESULT,current,<PATTERN>,<transport>,<size>,latency,<us>
// Differences, on purpose: each side receives in its own binding's natural way. NetZlink's receiver
// and subscriber block in TryReceive; zlink's binding bench reads the receiver's ROUTER socket raw,
// and polls its SPOT subscriber with DONTWAIT and a 1 ms sleep when it finds nothing.
using System.Diagnostics;
using System.Globalization;
using NetZlink;
using NetZlink.Services;

internal static class BindingBench
{
    private static readonly TimeSpan ReceiveTimeout = TimeSpan.FromSeconds(5);

    public static async Task<int> Gateway(string transport, int size)
    {
        int warmup = Env("BENCH_WARMUP_COUNT", 200);
        int latCount = Env("BENCH_LAT_COUNT", 200);
        int count = MessageCount(size);
        using var context = new ZlinkContext();
        string suffix = Guid.NewGuid().ToString("N");
        await using var registry = new ZlinkRegistry(context, new RegistryOptions
        {
            PubEndpoint = $"inproc://gw-pub-{suffix}",
            RouterEndpoint = $"inproc://gw-router-{suffix}",
            HeartbeatInterval = TimeSpan.FromSeconds(5),
            HeartbeatTimeout = TimeSpan.FromSeconds(60),
        });
        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(registry.PubEndpoint);
        const string service = "svc";
        discovery.Subscribe(service);
        await using var receiver = new ZlinkReceiver(context);
        receiver.Bind(Endpoint(transport));
        await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
        await receiver.RegisterAsync(service);
        await using var gateway = new ZlinkGateway(context, discovery);
        if (!WaitUntil(() => discovery.GetReceivers(service).Count > 0) || !WaitUntil(() => gateway.ConnectionCount(service) > 0))
        {
            return Fail("GATEWAY: the receiver was not found within 5 s");
        }

        Thread.Sleep(300);
        byte[] payload = Payload(size);
        double latencyUs = Latency(warmup, latCount, () =>
        {
            gateway.Send(service, payload);
            Receive(receiver);
        });
        (double rate, int received) = Burst(count, () => gateway.Send(service, payload), () =>
        {
            if (!receiver.TryReceive(ReceiveTimeout, out ServiceMessage? m))
            {
                return false;
            }

            m.Dispose();
            return true;
        });
        return Print("GATEWAY", transport, size, rate, latencyUs, received, count);
    }

    public static async Task<int> Spot(string transport, int size)
    {
        int warmup = Env("BENCH_WARMUP_COUNT", 200);
        int latCount = Env("BENCH_LAT_COUNT", 200);
        int count = Math.Min(MessageCount(size), Env("BENCH_SPOT_MSG_COUNT_MAX", 50_000));
        using var context = new ZlinkContext();
        await using var nodePub = new ZlinkSpotNode(context);
        await using var nodeSub = new ZlinkSpotNode(context);
        nodePub.Bind(Endpoint(transport));
        await nodeSub.ConnectPeerAsync(nodePub.BoundEndpoint!);
        using ZlinkSpotPublisher publisher = nodePub.CreatePublisher();
        await using ZlinkSpotSubscriber subscriber = nodeSub.CreateSubscriber();
        subscriber.Subscribe("bench");
        Thread.Sleep(300);
        byte[] payload = Payload(size);
        double latencyUs = Latency(warmup, latCount, () =>
        {
            publisher.Publish("bench", payload);
            Receive(subscriber);
        });
        (double rate, int received) = Burst(count, () => publisher.Publish("bench", payload), () =>
        {
            if (!subscriber.TryReceive(ReceiveTimeout, out SpotMessage m))
            {
                return false;
            }

            m.Dispose();
            return true;
        });
        return Print("SPOT", transport, size, rate, latencyUs, received, count);
    }

    /// <summary>Their latency: <paramref name="warmup"/> round trips unmeasured, then the mean of <paramref name="count"/>.</summary>
    private static double Latency(int warmup, int count, Action oneWay)
    {
        for (int i = 0; i < warmup; i++)
        {
            oneWay();
        }

        var clock = Stopwatch.StartNew();
        for (int i = 0; i < count; i++)
        {
            oneWay();
        }

        return clock.Elapsed.TotalMicroseconds / count;
    }

    /// <summary>Their throughput: a reader thread takes up to <paramref name="count"/> while this
    /// thread sends <paramref name="count"/>; the rate of what arrived, over the whole time.</summary>
    private static (double Rate, int Received) Burst(int count, Action send, Func<bool> receiveOne)
    {
        int received = 0;
        var reader = new Thread(() =>
        {
            while (received < count && receiveOne())
            {
                received++;
            }
        });
        reader.Start();
        var clock = Stopwatch.StartNew();
        for (int i = 0; i < count; i++)
        {
            send();
        }

        reader.Join();
        return (received / clock.Elapsed.TotalSeconds, received);
    }

    private static void Receive(ZlinkReceiver receiver)
    {
        if (!receiver.TryReceive(ReceiveTimeout, out ServiceMessage? m))
        {
            throw new TimeoutException("no request within 5 s");
        }

        m.Dispose();
    }

    private static void Receive(ZlinkSpotSubscriber subscriber)
    {
        if (!subscriber.TryReceive(ReceiveTimeout, out SpotMessage m))
        {
            throw new TimeoutException("no publish within 5 s");
        }

        m.Dispose();
    }

    // As theirs: the throughput on whatever arrived (a loss shows as received < count and in the
    // time, which includes the receive timeout); a loss is also said on a line of its own.
    private static int Print(string pattern, string transport, int size, double throughput, double latencyUs, int received, int count)
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT,current,{pattern},{transport},{size},throughput,{throughput}"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"RESULT,current,{pattern},{transport},{size},latency,{latencyUs}"));
        if (received < count)
        {
            Console.WriteLine($"LOSS {pattern}: {received} of {count} received");
            return 3;
        }

        return 0;
    }

    private static int Fail(string why)
    {
        Console.WriteLine("FAIL " + why);
        return 2;
    }

    private static byte[] Payload(int size)
    {
        var payload = new byte[size];
        Array.Fill(payload, (byte)'a');
        return payload;
    }

    private static string Endpoint(string transport) => transport switch
    {
        "tcp" => "tcp://127.0.0.1:*",
        "inproc" => $"inproc://bench-{Guid.NewGuid():N}",
        "ipc" => $"ipc:///tmp/netzlink-bench-{Guid.NewGuid():N}.sock",
        _ => throw new ArgumentException($"transport {transport}: tcp, inproc or ipc"),
    };

    private static int MessageCount(int size) => Env("BENCH_MSG_COUNT", size <= 1024 ? 200_000 : 20_000);

    private static int Env(string name, int fallback) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out int v) && v > 0 ? v : fallback;

    private static bool WaitUntil(Func<bool> check)
    {
        for (var clock = Stopwatch.StartNew(); clock.ElapsedMilliseconds < 5000; Thread.Sleep(10))
        {
            if (check())
            {
                return true;
            }
        }

        return false;
    }
}
