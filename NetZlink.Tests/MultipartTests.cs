// Multipart messages are atomic: nothing of a message is visible until its last frame is sent,
// then every frame arrives, in order, with RCVMORE on all but the last.
namespace NetZlink.Tests;

public sealed class MultipartTests : ContextTest
{
    [TestCase("inproc"), TestCase("tcp"), CancelAfter(20_000)]
    public void Message_IsInvisibleUntilItsLastFrame(string transport)
    {
        var (receiver, sender) = ConnectedPairs(transport);

        // Make sure the connection is up, so "nothing arrived" below means "held back".
        sender.Send(Wait.Bytes("hello"));
        Assert.That(Wait.Text(Wait.Frame(receiver)), Is.EqualTo("hello"));

        sender.SendMore(Wait.Bytes("part-1"));
        sender.Send(Wait.Bytes("part-2"), SendFlags.SendMore);
        Wait.Nothing(receiver, TimeSpan.FromMilliseconds(200));

        sender.Send(Wait.Bytes("part-3"));
        var buffer = new byte[32];
        var frames = new List<string>();
        var more = new List<bool>();
        do
        {
            Assert.That(receiver.TryReceive(buffer, Wait.Long, out int size), Is.True);
            frames.Add(Wait.Text(buffer[..size]));
            more.Add(receiver.ReceiveMore);
        }
        while (more[^1]);

        Assert.That(frames, Is.EqualTo(new[] { "part-1", "part-2", "part-3" }));
        Assert.That(more, Is.EqualTo(new[] { true, true, false }));
    }

    [Test, CancelAfter(20_000)]
    public void ReceiveMultipart_ReturnsEveryFrame_AndTryReceiveMultipartReportsNothing()
    {
        var (receiver, sender) = ConnectedPairs("inproc");

        var none = new List<byte[]>();
        Assert.That(receiver.TryReceiveMultipart(none), Is.False);
        Assert.That(none, Is.Empty);

        byte[] big = new byte[100_000];
        Random.Shared.NextBytes(big);
        sender.SendMultipart([], Wait.Bytes("b"), big);

        List<byte[]> parts = receiver.ReceiveMultipart();
        Assert.That(parts, Has.Count.EqualTo(3));
        Assert.That(parts[0], Is.Empty);
        Assert.That(Wait.Text(parts[1]), Is.EqualTo("b"));
        Assert.That(parts[2], Is.EqualTo(big));
    }

    [Test, CancelAfter(20_000)]
    public void ManyMessages_KeepTheirFramesTogether()
    {
        var (router, dealer) = Sockets(ZlinkSocketType.Router, ZlinkSocketType.Dealer);
        dealer.Connect(Endpoints.BindFresh(router, "tcp"));

        const int count = 500;
        for (int i = 0; i < count; i++)
        {
            dealer.SendMultipart(Wait.Bytes($"a{i}"), Wait.Bytes($"b{i}"), Wait.Bytes($"c{i}"));
        }

        for (int i = 0; i < count; i++)
        {
            List<byte[]> parts = Wait.Message(router);
            Assert.That(parts.Skip(1).Select(Wait.Text), Is.EqualTo(new[] { $"a{i}", $"b{i}", $"c{i}" }));
        }
    }
}
