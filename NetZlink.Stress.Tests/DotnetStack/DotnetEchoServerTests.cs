// The dotnet echo server in-process: every byte back to its own connection, in order, however the
// client splits its writes; connections counted; a port in use refused; Dispose closes everything.
namespace NetZlink.Stress.Tests.DotnetStack;

[TestFixture]
public sealed class DotnetEchoServerTests
{
    [Test]
    [CancelAfter(20_000)]
    public async Task EchoesEveryByteInOrderOnEachConnection(CancellationToken cancellationToken)
    {
        using var server = new DotnetEchoServer(new ScenarioSettings { Port = 0 });
        server.Start();
        var random = new Random(7);
        var clients = new List<Socket>();
        try
        {
            for (int i = 0; i < 4; i++)
            {
                var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                clients.Add(client);
                await client.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.Port), cancellationToken);
            }

            // Each connection gets its own bytes, written in odd-sized pieces, and must get back exactly them.
            var sent = clients.Select((_, i) => Enumerable.Range(0, 300_000).Select(b => (byte)((b * (i + 3)) + i)).ToArray()).ToArray();
            Task[] readers = clients.Select((c, i) => ReadExactlyAsync(c, sent[i].Length, cancellationToken)
                .ContinueWith(t => Assert.That(t.Result, Is.EqualTo(sent[i]), $"connection {i}"), cancellationToken, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default))
                .ToArray();
            for (int offset = 0; offset < sent[0].Length;)
            {
                int piece = Math.Min(random.Next(1, 9000), sent[0].Length - offset);
                for (int i = 0; i < clients.Count; i++)
                {
                    await clients[i].SendAsync(sent[i].AsMemory(offset, piece), SocketFlags.None, cancellationToken);
                }

                offset += piece;
            }

            await Task.WhenAll(readers);
            Assert.Multiple(() =>
            {
                Assert.That(server.Connections, Is.EqualTo(4));
                Assert.That(server.Accepted, Is.EqualTo(4));
                Assert.That(server.BytesEchoed, Is.EqualTo(4L * 300_000));
                Assert.That(server.Fault, Is.Null);
            });
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }
    }

    [Test]
    [CancelAfter(20_000)]
    public async Task DisposeClosesTheConnections(CancellationToken cancellationToken)
    {
        var server = new DotnetEchoServer(new ScenarioSettings { Port = 0 });
        server.Start();
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.Port), cancellationToken);
        while (server.Connections == 0)
        {
            await Task.Delay(5, cancellationToken);
        }

        server.Dispose();

        byte[] buffer = new byte[16];
        int read;
        try
        {
            read = await client.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
            read = 0;
        }

        Assert.Multiple(() =>
        {
            Assert.That(read, Is.Zero, "the server side is closed");
            Assert.That(server.Connections, Is.Zero);
        });
    }

    [Test]
    [CancelAfter(10_000)]
    public void APortInUseFailsStart()
    {
        using var occupier = new TcpListener(IPAddress.Loopback, 0);
        occupier.Start();
        int port = ((IPEndPoint)occupier.LocalEndpoint).Port;
        using var server = new DotnetEchoServer(new ScenarioSettings { Port = port });

        SocketException? e = Assert.Throws<SocketException>(server.Start);

        Assert.That(e!.SocketErrorCode, Is.EqualTo(SocketError.AddressAlreadyInUse));
    }

    private static async Task<byte[]> ReadExactlyAsync(Socket socket, int length, CancellationToken cancellationToken)
    {
        byte[] received = new byte[length];
        int got = 0;
        while (got < length)
        {
            int read = await socket.ReceiveAsync(received.AsMemory(got), SocketFlags.None, cancellationToken);
            Assert.That(read, Is.Positive, "the server closed early");
            got += read;
        }

        return received;
    }
}
