// Helpers for the async tests: bounded awaits (a hang fails the test instead of stalling the
// run) and connected pairs of sockets.
namespace NetZlink.Tests.Async;

internal static class AsyncTestSupport
{
    /// <summary>How long any single async operation of a test may take before it counts as hung.</summary>
    public static readonly TimeSpan HangLimit = TimeSpan.FromSeconds(15);

    /// <summary>Awaits <paramref name="task"/> within <see cref="HangLimit"/>, or fails the test naming <paramref name="what"/>.</summary>
    public static async Task<T> Within<T>(ValueTask<T> task, string what)
    {
        Task<T> t = task.AsTask();
        if (await Task.WhenAny(t, Task.Delay(HangLimit)).ConfigureAwait(false) != t)
        {
            Assert.Fail($"hung: {what} did not complete within {HangLimit.TotalSeconds} s");
        }

        return await t.ConfigureAwait(false);
    }

    /// <summary>Awaits <paramref name="task"/> within <see cref="HangLimit"/>, or fails the test naming <paramref name="what"/>.</summary>
    public static async Task Within(ValueTask task, string what) => await Within(Wrap(task), what).ConfigureAwait(false);

    /// <summary>Awaits a plain task within <see cref="HangLimit"/>.</summary>
    public static async Task Within(Task task, string what)
    {
        if (await Task.WhenAny(task, Task.Delay(HangLimit)).ConfigureAwait(false) != task)
        {
            Assert.Fail($"hung: {what} did not complete within {HangLimit.TotalSeconds} s");
        }

        await task.ConfigureAwait(false);
    }

    /// <summary>The exception <paramref name="task"/> ends with, within <see cref="HangLimit"/> (null: it succeeded).</summary>
    public static async Task<Exception?> Outcome(ValueTask task, string what)
    {
        try
        {
            await Within(task, what).ConfigureAwait(false);
            return null;
        }
        catch (AssertionException)
        {
            throw;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    /// <summary>A PAIR bound on a fresh endpoint of <paramref name="transport"/> and a PAIR connected to it.</summary>
    public static (ZlinkSocket Server, ZlinkSocket Client) Pair(ZlinkContext context, string transport, ZlinkSocketType type = ZlinkSocketType.Pair, ZlinkSocketType? peer = null)
    {
        ZlinkSocket server = context.CreateSocket(peer ?? type);
        ZlinkSocket client = context.CreateSocket(type);
        try
        {
            client.Connect(Endpoints.BindFresh(server, transport));
            return (server, client);
        }
        catch
        {
            client.Dispose();
            server.Dispose();
            throw;
        }
    }

    /// <summary>An inproc PAIR pair whose client queues at most one message and whose server takes one, so sends soon wait.</summary>
    public static (ZlinkSocket Server, ZlinkSocket Client) TightPair(ZlinkContext context)
    {
        ZlinkSocket server = context.CreateSocket(ZlinkSocketType.Pair);
        ZlinkSocket client = context.CreateSocket(ZlinkSocketType.Pair);
        server.ReceiveHighWaterMark = 1;
        client.SendHighWaterMark = 1;
        client.Connect(Endpoints.BindFresh(server, "inproc"));
        return (server, client);
    }

    /// <summary>Sends one-byte frames 0, 1, 2… until a SendAsync has to wait; returns how many went at once and the waiting send.</summary>
    public static async Task<(int Sent, ValueTask Waiting)> FillUntilSendWaits(ZlinkSocket client)
    {
        int sent = 0;
        while (true)
        {
            ValueTask sending = client.SendAsync(new byte[] { (byte)sent });
            if (!sending.IsCompleted)
            {
                return (sent, sending);
            }

            await sending.ConfigureAwait(false);
            sent++;
            Assert.That(sent, Is.LessThan(10_000), "the high-water mark never stopped the sender");
        }
    }

    private static async ValueTask<bool> Wrap(ValueTask task)
    {
        await task.ConfigureAwait(false);
        return true;
    }
}
