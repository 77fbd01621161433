// Fuzzing SPOT's two decoders: what a node takes from its peers' PUB sockets ([topic][parts…];
// zlink drops a topic without parts and an empty topic), and the topic and pattern rules of
// publish and subscribe. Seeded: NETZLINK_FUZZ_SEED=<seed> replays, NETZLINK_FUZZ_ITERATIONS=<n>
// sets the number of messages (and strings).
using System.Text;
using NetZlink.Services;

namespace NetZlink.Tests.Services;

[TestFixture]
[CancelAfter(120_000)]
public sealed class SpotFuzzTests
{
    [Test]
    public async Task Random_messages_from_a_peer_are_delivered_exactly_or_refused_and_counted()
    {
        Random random = Fuzz.Random(out _);
        int count = Fuzz.Iterations(2000);
        using var context = new ZlinkContext();
        using ZlinkSocket peer = context.CreateSocket(ZlinkSocketType.Pub);
        peer.SendHighWaterMark = 0; // unlimited: nothing dropped on the way
        peer.Bind("tcp://127.0.0.1:*");
        await using var node = new ZlinkSpotNode(context, new SpotNodeOptions { SubscriberCapacity = count + 10 });
        await node.ConnectPeerAsync(peer.LastEndpoint!);
        await using ZlinkSpotSubscriber sub = node.CreateSubscriber();
        sub.SubscribePattern("*");

        // Until the subscription reached the peer.
        while (true)
        {
            peer.Send("hello"u8, SendFlags.SendMore);
            peer.Send("x"u8);
            using var poll = CancellationTokenSource.CreateLinkedTokenSource(Wait.Token);
            poll.CancelAfter(50);
            try
            {
                using SpotMessage m = await sub.ReceiveAsync(poll.Token);
                break;
            }
            catch (OperationCanceledException) when (!Wait.Token.IsCancellationRequested)
            {
            }
        }

        await Task.Delay(100, Wait.Token);
        while (sub.Messages.TryRead(out SpotMessage hello))
        {
            hello.Dispose();
        }

        var expected = new List<byte[][]>();
        int malformed = 0;
        for (int i = 0; i < count; i++)
        {
            int frames = random.Next(1, 5);
            byte[][] message = new byte[frames][];
            message[0] = random.Next(6) == 0 ? [] : Fuzz.Bytes(random, random.Next(1, 12));
            for (int f = 1; f < frames; f++)
            {
                message[f] = Fuzz.Bytes(random, random.Next(0, 40));
            }

            for (int f = 0; f < frames; f++)
            {
                peer.Send(message[f], f + 1 < frames ? SendFlags.SendMore : SendFlags.None);
            }

            if (frames < 2 || message[0].Length == 0)
            {
                malformed++;
            }
            else
            {
                expected.Add(message);
            }
        }

        peer.Send("end"u8, SendFlags.SendMore);
        peer.Send("end"u8);
        var got = new List<byte[][]>();
        while (true)
        {
            using SpotMessage m = await sub.ReceiveAsync(Wait.Token);
            if (m.TopicUtf8.SequenceEqual("end"u8) && m.PartCount == 1 && m[0].SequenceEqual("end"u8))
            {
                break;
            }

            var parts = new byte[m.PartCount + 1][];
            parts[0] = m.TopicUtf8.ToArray();
            for (int p = 0; p < m.PartCount; p++)
            {
                parts[p + 1] = m[p].ToArray();
            }

            got.Add(parts);
        }

        TestContext.Out.WriteLine($"{count} messages: {expected.Count} delivered, {malformed} refused; last refusal: {node.LastRefusal}");
        Assert.That(got, Has.Count.EqualTo(expected.Count), "every well-formed message, nothing else");
        for (int i = 0; i < got.Count; i++)
        {
            Assert.That(got[i], Is.EqualTo(expected[i]), $"message {i} byte for byte");
        }

        Assert.That(node.RefusedMessages, Is.EqualTo(malformed), "every malformed message counted");
        Assert.That(sub.Dropped, Is.Zero);
    }

    [Test]
    public async Task Random_topics_and_patterns_are_taken_exactly_when_zlink_takes_them()
    {
        Random random = Fuzz.Random(out _);
        int count = Fuzz.Iterations(2000);
        using var context = new ZlinkContext();
        await using var node = new ZlinkSpotNode(context);
        using ZlinkSpotPublisher pub = node.CreatePublisher();
        await using ZlinkSpotSubscriber sub = node.CreateSubscriber();
        char[] alphabet = ['a', 'b', ':', '*', '\0', 'é', '\ud800', '\udc00', '-'];
        int accepted = 0;
        for (int i = 0; i < count; i++)
        {
            int length = random.Next(8) == 0 ? random.Next(200, 300) : random.Next(0, 8);
            var text = new StringBuilder();
            for (int c = 0; c < length; c++)
            {
                text.Append(random.Next(3) == 0 ? alphabet[random.Next(alphabet.Length)] : 'a');
            }

            string value = text.ToString();
            bool topicOk = ValidTopic(value);
            int star = value.IndexOf('*', StringComparison.Ordinal);
            bool patternOk = star >= 0 && star == value.Length - 1 && (star == 0 || ValidTopic(value[..star])) && Utf8Length(value) <= 255;

            bool published = Try(() => pub.Publish(value, "x"u8));
            Assert.That(published, Is.EqualTo(topicOk), $"publish \"{Escape(value)}\"");

            // Subscribe takes any valid topic ('*' included); SubscribePattern only a pattern.
            bool subscribed = Try(() => sub.Subscribe(value));
            Assert.That(subscribed, Is.EqualTo(topicOk), $"subscribe \"{Escape(value)}\"");
            bool patterned = Try(() => sub.SubscribePattern(value));
            Assert.That(patterned, Is.EqualTo(patternOk), $"subscribe pattern \"{Escape(value)}\"");
            // A string both a topic and a pattern ("ab*") was subscribed as both: the first
            // unsubscribe removes the pattern, the second the topic.
            if (patterned)
            {
                sub.Unsubscribe(value);
            }

            if (subscribed)
            {
                sub.Unsubscribe(value);
            }

            Assert.That(() => sub.Unsubscribe("never-subscribed"), Throws.InvalidOperationException);

            accepted += published ? 1 : 0;
        }

        TestContext.Out.WriteLine($"{count} strings, {accepted} valid topics");
        while (sub.Messages.TryRead(out SpotMessage m))
        {
            m.Dispose();
        }

        Assert.That(sub.Subscriptions, Is.Empty, "every subscription removed again");
    }

    private static bool ValidTopic(string value)
    {
        if (value.Length == 0 || value.Contains('\0', StringComparison.Ordinal))
        {
            return false;
        }

        for (int i = 0; i < value.Length; i++)
        {
            if (char.IsHighSurrogate(value[i]) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]))
            {
                i++;
            }
            else if (char.IsSurrogate(value[i]))
            {
                return false;
            }
        }

        return Utf8Length(value) <= 255;
    }

    private static int Utf8Length(string value) => Encoding.UTF8.GetByteCount(value);

    private static bool Try(Action action)
    {
        try
        {
            action();
            return true;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }

    private static string Escape(string value) =>
        string.Concat(value.Select(c => c is < ' ' or (>= '\ud800' and <= '\udfff') ? $"\\u{(int)c:x4}" : c.ToString()));
}
