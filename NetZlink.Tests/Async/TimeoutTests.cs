// Timeouts of the blocking calls: when ReceiveTimeout or SendTimeout passes, Receive and Send
// throw ZlinkTimeoutException (a TimeoutException that carries EAGAIN and the timeout), never a
// bare EAGAIN ZlinkException; the Try* overloads return false.
namespace NetZlink.Tests.Async;

[CancelAfter(30_000)]
public sealed class TimeoutTests : ContextTest
{
    [Test]
    public void Receive_WhenReceiveTimeoutPasses_ThrowsZlinkTimeoutException()
    {
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.Pair(Context, "inproc");
        using var serverOwned = server;
        using var clientOwned = client;
        server.ReceiveTimeout = 50;
        byte[] buffer = new byte[8];

        var timedOut = Assert.Throws<ZlinkTimeoutException>(() => server.Receive(buffer));
        Assert.That(timedOut, Is.InstanceOf<TimeoutException>());
        Assert.That(timedOut!.Error, Is.EqualTo(ZlinkError.EAGAIN));
        Assert.That(timedOut.TimeoutMilliseconds, Is.EqualTo(50));
        Assert.That(timedOut.Message, Does.Contain("Receive timed out").And.Contain("ReceiveTimeout (50 ms)"));
        Assert.Throws<ZlinkTimeoutException>(() => server.ReceiveFrame());
        Assert.Throws<ZlinkTimeoutException>(() => server.ReceiveMultipart());
        using (var message = new ZlinkMessage())
        {
            Assert.Throws<ZlinkTimeoutException>(() => server.Receive(message));
        }

        Assert.That(server.TryReceive(buffer, out _), Is.False);
        Assert.That(server.TryReceive(buffer, TimeSpan.FromMilliseconds(20), out _), Is.False);
    }

    [Test]
    public void Send_WhenSendTimeoutPasses_ThrowsZlinkTimeoutException_ButDontWaitStaysAZlinkException()
    {
        using ZlinkSocket lonely = Context.CreateSocket(ZlinkSocketType.Pair);
        lonely.SendTimeout = 50;
        lonely.Bind(Endpoints.Inproc());

        // A PAIR with no peer cannot queue anything.
        var timedOut = Assert.Throws<ZlinkTimeoutException>(() => lonely.Send("x"u8));
        Assert.That(timedOut!.Operation, Is.EqualTo("Send"));
        Assert.That(timedOut.Message, Does.Contain("SendTimeout (50 ms)"));
        using (var message = new ZlinkMessage("m"u8))
        {
            Assert.Throws<ZlinkTimeoutException>(() => lonely.Send(message));
            Assert.That(message.Size, Is.EqualTo(1), "a message that was not sent is left intact");
        }

        var wouldBlock = Assert.Throws<ZlinkException>(() => lonely.Send("x"u8, SendFlags.DontWait));
        Assert.That(wouldBlock!.Error, Is.EqualTo(ZlinkError.EAGAIN));
        Assert.That(lonely.TrySend("x"u8), Is.False);
    }
}
