// The echo server's memory bound is real (docs/scenarios.md): a client that pushes packets and
// never reads its echoes makes the server (--role server, a real process, at the default --hwm)
// hold at most 8 MiB in its socket's queue and 8 MiB in the engine's retry buffer before it closes
// the connection as a slow consumer. Before, the socket's mark was --hwm's 1,000,000 messages, and
// pushing 500 MiB grew the server from 80 to 588 MB.
namespace NetZlink.Stress.Tests.Hosting;

[RequiresStreamClient]
public sealed class ServerMemoryTests : IntegrationFixture
{
    private const long Pushed = 256L * 1024 * 1024;

    // 8 MiB queued + 8 MiB kept, and room for the runtime's own growth while it serves.
    private const long GrowthBoundKb = 64L * 1024;

    [Test]
    [CancelAfter(120_000)]
    public async Task AClientThatNeverReadsGrowsTheServerBy64MiBAtMost(CancellationToken cancellationToken)
    {
        using StressProcess server = StressProcess.Start("--role", "server", "--port", "0");
        int port = await server.WaitForReadyPortAsync(cancellationToken);
        long before = Status(server.Id, "VmRSS");

        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 64 * 1024 };
        await client.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), cancellationToken);
        byte[] packet = new byte[64 * 1024];
        BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)(packet.Length - 4));
        long pushed = 0;
        bool closedByServer = false;
        using var stall = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        try
        {
            while (pushed < Pushed)
            {
                // A send that waits 5 s: the server stopped reading (it may, once the kernel's buffers are full).
                stall.CancelAfter(TimeSpan.FromSeconds(5));
                pushed += await client.SendAsync(packet, SocketFlags.None, stall.Token);
            }
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.Shutdown or SocketError.ConnectionAborted)
        {
            closedByServer = true;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
        }

        long peak = Status(server.Id, "VmHWM");
        TestContext.Out.WriteLine($"pushed {pushed} bytes; server RSS {before} kB before, peak {peak} kB; closed by the server: {closedByServer}");
        Assert.Multiple(() =>
        {
            Assert.That(server.HasExited, Is.False, "the server is still up");
            Assert.That(peak - before, Is.LessThanOrEqualTo(GrowthBoundKb), "the server's growth (kB)");
            Assert.That(closedByServer, Is.True, "the server closed the connection that never read, as a slow consumer");
        });
    }

    /// <summary>A "VmRSS"/"VmHWM" line of /proc/pid/status, in kB.</summary>
    private static long Status(int pid, string field)
    {
        foreach (string line in File.ReadLines($"/proc/{pid}/status"))
        {
            if (line.StartsWith(field + ":", StringComparison.Ordinal))
            {
                return long.Parse(line[(field.Length + 1)..].Trim().Split(' ')[0], CultureInfo.InvariantCulture);
            }
        }

        throw new InvalidOperationException($"no {field} in /proc/{pid}/status");
    }
}
