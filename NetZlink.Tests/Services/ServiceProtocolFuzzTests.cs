// The control protocol's decoders under random and mutated input: a message either decodes (and
// then re-encodes to one that decodes the same) or is refused with a ServiceProtocolException
// naming what is wrong; nothing else is ever thrown. Then the same garbage sent to a live registry
// and a live discovery: each refused message is counted, and both keep working.
// Seeded: NETZLINK_FUZZ_SEED=<seed> replays a run, NETZLINK_FUZZ_ITERATIONS=<n> runs longer.
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(60_000)]
public sealed class ServiceProtocolFuzzTests
{
    private static string Name(Random random)
    {
        const string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-._/é";
        int length = random.Next(1, 24);
        return string.Create(length, random, (span, r) =>
        {
            for (int i = 0; i < span.Length; i++)
            {
                span[i] = alphabet[r.Next(alphabet.Length)];
            }
        });
    }

    internal static List<byte[]> RandomServiceList(Random random, out ServiceListMessage message)
    {
        var services = new List<ServiceListEntry>();
        int n = random.Next(0, 4);
        for (int i = 0; i < n; i++)
        {
            string name = Name(random);
            var receivers = new List<ReceiverInfo>();
            int m = random.Next(0, 4);
            for (int j = 0; j < m; j++)
            {
                byte[] rid = new byte[random.Next(0, 17)];
                random.NextBytes(rid);
                receivers.Add(new ReceiverInfo(name, "tcp://" + Name(random), new RoutingId(rid), (uint)random.Next(1, 100)));
            }

            services.Add(new ServiceListEntry(random.Next(2) == 0 ? ServiceType.Gateway : ServiceType.Spot, name, receivers));
        }

        message = new ServiceListMessage((uint)random.Next(), (ulong)random.NextInt64(), services);
        return ServiceProtocol.EncodeServiceList(message.RegistryId, message.ListSeq, services);
    }

    private static List<byte[]> RandomValid(Random random, out int kind)
    {
        kind = random.Next(3);
        switch (kind)
        {
            case 0:
                return RandomServiceList(random, out _);
            case 1:
                ushort[] ids = [ServiceProtocol.Register, ServiceProtocol.Unregister, ServiceProtocol.Heartbeat, ServiceProtocol.UpdateWeight];
                ushort id = ids[random.Next(ids.Length)];
                bool weighted = id == ServiceProtocol.UpdateWeight || (id == ServiceProtocol.Register && random.Next(2) == 0);
                return ServiceProtocol.EncodeRegistryRequest(id, ServiceType.Gateway, Name(random), "tcp://" + Name(random), weighted ? (uint)random.Next() : null);
            default:
                return ServiceProtocol.EncodeRegisterAck((byte)random.Next(256), Name(random), random.Next(2) == 0 ? "" : Name(random));
        }
    }

    internal static List<byte[]> Mutate(Random random, List<byte[]> frames)
    {
        var m = frames.Select(f => (byte[])f.Clone()).ToList();
        int edits = random.Next(1, 4);
        for (int e = 0; e < edits; e++)
        {
            int at = m.Count == 0 ? 0 : random.Next(m.Count);
            switch (random.Next(8))
            {
                case 0 when m.Count > 0: m.RemoveAt(at); break;
                case 1: m.Insert(at, RandomBytes(random, random.Next(0, 9))); break;
                case 2 when m.Count > 0 && m[at].Length > 0: m[at] = m[at][..random.Next(m[at].Length)]; break;
                case 3 when m.Count > 0: m[at] = [.. m[at], .. RandomBytes(random, random.Next(1, 4))]; break;
                case 4 when m.Count > 0 && m[at].Length > 0: m[at][random.Next(m[at].Length)] ^= (byte)random.Next(1, 256); break;
                case 5 when m.Count > 1: (m[at], m[0]) = (m[0], m[at]); break;
                case 6 when m.Count > 0 && m[at].Length == 4: m[at] = [0xFF, 0xFF, 0xFF, 0x7F]; break; // a huge count
                default: m = [.. Enumerable.Range(0, random.Next(0, 6)).Select(_ => RandomBytes(random, random.Next(0, 12)))]; break;
            }
        }

        return m;
    }

    private static byte[] RandomBytes(Random random, int n)
    {
        byte[] b = new byte[n];
        random.NextBytes(b);
        return b;
    }

    /// <summary>Every decoder on one message: refused only with ServiceProtocolException; what decodes re-encodes to the same.</summary>
    private static int DecodeAll(List<byte[]> frames)
    {
        int refused = 0;
        try
        {
            ServiceListMessage list = ServiceProtocol.DecodeServiceList(frames);
            ServiceListMessage again = ServiceProtocol.DecodeServiceList(ServiceProtocol.EncodeServiceList(list.RegistryId, list.ListSeq, list.Services));
            Assert.That(again.Services.SelectMany(s => s.Receivers), Is.EqualTo(list.Services.SelectMany(s => s.Receivers)));
        }
        catch (ServiceProtocolException e)
        {
            Assert.That(e.Message, Does.StartWith("SERVICE_LIST:"));
            refused++;
        }

        try
        {
            RegistryRequest r = ServiceProtocol.DecodeRegistryRequest(frames);
            Assert.That(r.Weight, Is.GreaterThan(0u));
            Assert.That(r.Service, Is.Not.Empty);
        }
        catch (ServiceProtocolException e)
        {
            Assert.That(e.Message, Is.Not.Empty);
            refused++;
        }

        try
        {
            ServiceProtocol.DecodeRegisterAck(frames);
        }
        catch (ServiceProtocolException e)
        {
            Assert.That(e.Message, Does.StartWith("REGISTER_ACK:"));
            refused++;
        }

        return refused;
    }

    [Test]
    public void Valid_messages_decode_to_what_was_encoded()
    {
        Random random = Fuzz.Random(out _);
        int iterations = Fuzz.Iterations(2_000);
        for (int i = 0; i < iterations; i++)
        {
            List<byte[]> frames = RandomServiceList(random, out ServiceListMessage sent);
            ServiceListMessage got = ServiceProtocol.DecodeServiceList(frames);
            Assert.That(got.RegistryId, Is.EqualTo(sent.RegistryId));
            Assert.That(got.ListSeq, Is.EqualTo(sent.ListSeq));
            Assert.That(got.Services.Select(s => (s.Type, s.Name)), Is.EqualTo(sent.Services.Select(s => (s.Type, s.Name))));
            Assert.That(got.Services.SelectMany(s => s.Receivers), Is.EqualTo(sent.Services.SelectMany(s => s.Receivers)));
        }
    }

    [Test]
    public void Mutated_and_random_frames_are_refused_with_a_protocol_error_and_never_anything_else()
    {
        Random random = Fuzz.Random(out _);
        int iterations = Fuzz.Iterations(20_000);
        int refused = 0;
        for (int i = 0; i < iterations; i++)
        {
            List<byte[]> frames = Mutate(random, RandomValid(random, out _));
            refused += DecodeAll(frames);
        }

        // Each message is one kind at most, so at least two of the three decoders refuse it.
        Assert.That(refused, Is.GreaterThanOrEqualTo(2 * iterations));
        TestContext.Out.WriteLine($"{iterations} mutated messages, {refused} refusals");
    }

    [TestCase(new byte[] { 5, 0 }, "SERVICE_LIST: frame 1 (registry id) is missing (the message has 1 frames)")]
    [TestCase(new byte[] { 9, 0 }, "SERVICE_LIST: message id 0x0009, not 0x0005 or 0x0006")]
    [TestCase(new byte[] { 5 }, "SERVICE_LIST: frame 0 (message id) has 1 bytes, not 2")]
    public void A_refusal_names_the_message_and_the_frame(byte[] first, string expected)
    {
        var e = Assert.Throws<ServiceProtocolException>(() => ServiceProtocol.DecodeServiceList([first]));
        Assert.That(e!.Message, Is.EqualTo(expected));
    }

    [Test]
    public void A_count_larger_than_the_message_is_refused_before_anything_is_allocated()
    {
        List<byte[]> frames = [ServiceProtocol.U16(ServiceProtocol.ServiceList), ServiceProtocol.U32(1), ServiceProtocol.U64(1), ServiceProtocol.U32(uint.MaxValue)];
        var e = Assert.Throws<ServiceProtocolException>(() => ServiceProtocol.DecodeServiceList(frames));
        Assert.That(e!.Message, Is.EqualTo("SERVICE_LIST: service count 4294967295 does not fit the 0 frames that follow"));
    }

    [Test]
    public async Task A_live_registry_and_discovery_count_each_refused_message_and_keep_working()
    {
        Random random = Fuzz.Random(out _);
        int messages = Fuzz.Iterations(300);
        using var context = new ZlinkContext();
        await using var registry = new ZlinkRegistry(context, ServiceRoundTripTests.FastRegistry());

        // Garbage to the registry's ROUTER from a DEALER: count what the decoder refuses.
        using var dealer = context.CreateSocket(ZlinkSocketType.Dealer);
        dealer.Connect(registry.RouterEndpoint);
        long expectRegistry = 0;
        for (int i = 0; i < messages; i++)
        {
            List<byte[]> frames = Mutate(random, RandomValid(random, out _));
            if (frames.Count == 0)
            {
                continue;
            }

            try
            {
                ServiceProtocol.DecodeRegistryRequest(frames);
            }
            catch (ServiceProtocolException)
            {
                expectRegistry++;
            }

            dealer.SendMultipart([.. frames]);
        }

        // Garbage to a discovery from a fake registry (a PUB it subscribes to).
        using var pub = context.CreateSocket(ZlinkSocketType.Pub);
        pub.Bind("tcp://127.0.0.1:*");
        await using var discovery = new ZlinkDiscovery(context);
        await discovery.ConnectRegistryAsync(pub.LastEndpoint);
        var hello = new ReceiverInfo("hello", "tcp://127.0.0.1:1", new RoutingId([1, 2, 3]), 1);
        ulong seq = 1;
        while (discovery.ReceiverCount("hello") == 0)
        {
            pub.SendMultipart([.. ServiceProtocol.EncodeServiceList(7, seq++, [new ServiceListEntry(ServiceType.Gateway, "hello", [hello])])]);
            await Task.Delay(10, Wait.Token);
        }

        long expectDiscovery = 0;
        for (int i = 0; i < messages; i++)
        {
            List<byte[]> frames = Mutate(random, ServiceProtocol.EncodeServiceList(7, seq, [new ServiceListEntry(ServiceType.Gateway, "hello", [hello])]));
            if (frames.Count == 0)
            {
                continue;
            }

            try
            {
                ServiceProtocol.DecodeServiceList(frames);
            }
            catch (ServiceProtocolException)
            {
                expectDiscovery++;
            }

            pub.SendMultipart([.. frames]);
        }

        // Both still work: a real registration goes through and is listed; the discovery applies a new list.
        await using var receiver = new ZlinkReceiver(context, ServiceRoundTripTests.FastReceiver());
        receiver.Bind("tcp://127.0.0.1:*");
        await receiver.ConnectRegistryAsync(registry.RouterEndpoint);
        await receiver.RegisterAsync("alive", cancellationToken: Wait.Token);
        Assert.That((await registry.GetReceiversAsync()).Select(r => r.Service), Does.Contain("alive"));
        pub.SendMultipart([.. ServiceProtocol.EncodeServiceList(7, ulong.MaxValue, [new ServiceListEntry(ServiceType.Gateway, "after", [hello with { Service = "after" }])])]);
        await discovery.WaitForAsync("after", r => r.Count == 1, Wait.Token);

        Wait.Until(() => registry.RefusedMessages == expectRegistry, $"registry refusals {registry.RefusedMessages} = {expectRegistry}");
        Assert.That(discovery.RefusedMessages, Is.EqualTo(expectDiscovery), discovery.LastRefusal);
        TestContext.Out.WriteLine($"registry refused {registry.RefusedMessages} (last: {registry.LastRefusal}); discovery refused {discovery.RefusedMessages} (last: {discovery.LastRefusal})");
    }
}
