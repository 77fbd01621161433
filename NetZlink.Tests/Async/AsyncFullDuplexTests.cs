// One socket, one async receive waiting the whole time and sends completing at once beside it (the
// ROUTER of a request/reply service): a send may process the socket's commands and so spend the
// descriptor's signal that a message arrived for the waiting receive. The receive must still see
// every message: a send that completes at once re-reads the socket for the waiting receive.
namespace NetZlink.Tests.Async;

[CancelAfter(120_000)]
public sealed class AsyncFullDuplexTests : ContextTest
{
    [TestCase("tcp")]
    [TestCase("inproc")]
    public async Task AWaitingReceive_SeesEveryEcho_WhileSendsCompleteBesideIt(string transport)
    {
        const int Messages = 20_000;
        var (echo, socket) = ConnectedPairs(transport);
        echo.SendHighWaterMark = 0;
        echo.ReceiveHighWaterMark = 0;
        socket.SendHighWaterMark = 0;
        socket.ReceiveHighWaterMark = 0;
        var echoing = new Thread(() =>
        {
            byte[] frame = new byte[16];
            for (int i = 0; i < Messages; i++)
            {
                int size = echo.Receive(frame);
                echo.Send(frame.AsSpan(0, size));
            }
        }) { IsBackground = true, Name = "echo" };
        echoing.Start();

        int received = 0;
        Task receiving = Task.Run(async () =>
        {
            byte[] buffer = new byte[16];
            for (; received < Messages; received++)
            {
                int size = await socket.ReceiveAsync(buffer);
                Assert.That(BitConverter.ToInt32(buffer, 0), Is.EqualTo(received), "echoes in order");
                Assert.That(size, Is.EqualTo(4));
            }
        });

        byte[] message = new byte[4];
        for (int i = 0; i < Messages; i++)
        {
            BitConverter.TryWriteBytes(message, i);
            await socket.SendAsync(message);
        }

        await AsyncTestSupport.Within(receiving, $"the waiting receive ({received} of {Messages} echoes seen)");
        Assert.That(echoing.Join(TimeSpan.FromSeconds(10)), Is.True);
        Assert.That(received, Is.EqualTo(Messages));
    }
}
