// Disposal while async operations wait: disposing the socket completes them with
// ObjectDisposedException; disposing or shutting down the context completes them with an
// exception (ContextTerminatedException, or ObjectDisposedException when the close came first);
// none hangs, and nothing leaks (the assembly's leak check counts native handles after each test).
namespace NetZlink.Tests.Async;

[TestFixture]
[CancelAfter(60_000)]
public sealed class AsyncDisposalTests
{
    [Test]
    public async Task SocketDisposed_WhileReceiveAndSendWait_BothEndWithObjectDisposedException()
    {
        using var context = new ZlinkContext();
        (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.TightPair(context);
        using var serverOwned = server;
        (_, ValueTask sending) = await AsyncTestSupport.FillUntilSendWaits(client);
        ValueTask<int> receiving = client.ReceiveAsync(new byte[8]);

        _ = Task.Run(client.Dispose);
        Exception? sendOutcome = await AsyncTestSupport.Outcome(sending, "the waiting send");
        Exception? receiveOutcome = await AsyncTestSupport.Outcome(Discard(receiving), "the waiting receive");
        Assert.That(sendOutcome, Is.InstanceOf<ObjectDisposedException>());
        Assert.That(receiveOutcome, Is.InstanceOf<ObjectDisposedException>());
        Assert.That(client.IsDisposed, Is.True);
        Assert.CatchAsync<ObjectDisposedException>(async () => await client.ReceiveAsync(new byte[8]));
    }

    [TestCase(false), TestCase(true)]
    public async Task ContextDisposedOrShutDown_WhileReceivesWait_EndWithAnException(bool shutdownOnly)
    {
        var context = new ZlinkContext();
        try
        {
            var waiting = new List<Task<int>>();
            var sockets = new List<ZlinkSocket>();
            for (int i = 0; i < 20; i++)
            {
                (ZlinkSocket server, ZlinkSocket client) = AsyncTestSupport.Pair(context, i % 2 == 0 ? "inproc" : "tcp");
                sockets.Add(server);
                sockets.Add(client);
                waiting.Add(server.ReceiveAsync(new byte[8]).AsTask());
            }

            if (shutdownOnly)
            {
                context.Shutdown();
            }
            else
            {
                _ = Task.Run(context.Dispose);
            }

            foreach (Task<int> receive in waiting)
            {
                Exception? outcome = await AsyncTestSupport.Outcome(new ValueTask(receive), "a receive waiting when the context ended");
                Assert.That(outcome, Is.InstanceOf<ContextTerminatedException>().Or.InstanceOf<ObjectDisposedException>());
            }
        }
        finally
        {
            context.Dispose();
        }
    }

    private static async ValueTask Discard(ValueTask<int> task) => await task.ConfigureAwait(false);
}
