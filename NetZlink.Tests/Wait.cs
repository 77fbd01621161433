// Bounded waiting for tests: every wait has a deadline and honours the test's CancelAfter token.
using System.Text;

namespace NetZlink.Tests;

internal static class Wait
{
    public static readonly TimeSpan Long = TimeSpan.FromSeconds(10);

    public static CancellationToken Token => TestContext.CurrentContext.CancellationToken;

    /// <summary>Polls <paramref name="condition"/> until it holds; fails the test when it never does.</summary>
    public static void Until(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? Long);
        while (!condition())
        {
            Token.ThrowIfCancellationRequested();
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting for {what}");
            }

            Thread.Sleep(5);
        }
    }

    /// <summary>Receives one frame within the deadline, or fails the test.</summary>
    public static byte[] Frame(ZlinkSocket socket, TimeSpan? timeout = null)
    {
        var buffer = new byte[64 * 1024];
        Assert.That(socket.TryReceive(buffer, timeout ?? Long, out int size), Is.True, $"no frame arrived on the {socket.Type} socket");
        Assert.That(size, Is.LessThanOrEqualTo(buffer.Length), "frame larger than the test buffer");
        return buffer[..size];
    }

    /// <summary>Receives one whole message within the deadline, or fails the test.</summary>
    public static List<byte[]> Message(ZlinkSocket socket, TimeSpan? timeout = null)
    {
        var parts = new List<byte[]>();
        Assert.That(socket.TryReceiveMultipart(parts, timeout ?? Long), Is.True, $"no message arrived on the {socket.Type} socket");
        return parts;
    }

    /// <summary>Asserts that nothing arrives within <paramref name="window"/>.</summary>
    public static void Nothing(ZlinkSocket socket, TimeSpan window)
    {
        Span<byte> buffer = stackalloc byte[256];
        Assert.That(socket.TryReceive(buffer, window, out _), Is.False, $"a frame arrived on the {socket.Type} socket");
    }

    public static byte[] Bytes(string text) => Encoding.UTF8.GetBytes(text);

    public static string Text(byte[] bytes) => Encoding.UTF8.GetString(bytes);
}
