// The ws:// byte-stream contract on the dotnet side, randomized: whatever data frames a peer sends
// (binary or text messages, whole or fragmented into continuations, of any size, with pings in
// between), WebSocketByteStream hands on exactly the concatenated payload bytes, in order, to reads
// of any size, and a close from the peer reads as the end of the stream. The seed is printed;
// NETZLINK_FUZZ_SEED replays it.
using System.Net.WebSockets;

namespace NetZlink.Stress.Tests.WebSockets;

[TestFixture]
public sealed class WebSocketByteStreamTests
{
    [Test]
    [CancelAfter(60_000)]
    public async Task AnyMixOfFramesReadsAsTheExactByteStream(CancellationToken cancellationToken)
    {
        string? fixedSeed = Environment.GetEnvironmentVariable("NETZLINK_FUZZ_SEED");
        int seed = string.IsNullOrEmpty(fixedSeed) ? Random.Shared.Next() : int.Parse(fixedSeed, CultureInfo.InvariantCulture);
        TestContext.Out.WriteLine($"seed {seed} (repeat with NETZLINK_FUZZ_SEED={seed})");
        var random = new Random(seed);

        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        using var clientSocket = new TcpClient();
        Task connecting = clientSocket.ConnectAsync(IPAddress.Loopback, ((IPEndPoint)listener.LocalEndpoint).Port, cancellationToken).AsTask();
        using Socket serverSocket = await listener.AcceptSocketAsync(cancellationToken);
        await connecting;

        var serverNetwork = new NetworkStream(serverSocket, ownsSocket: false);
        Task<WebSocket?> accepting = WebSocketHandshake.AcceptAsync(serverNetwork, "/", cancellationToken);
        WebSocket client = await WebSocketHandshake.ConnectAsync(clientSocket.GetStream(), "127.0.0.1", "/", cancellationToken);
        using WebSocket server = (await accepting)!;
        using var stream = new WebSocketByteStream(client);

        byte[] sent = new byte[random.Next(1, 400_000)];
        int messages = 0;
        Task sending = Task.Run(async () =>
        {
            int at = 0;
            while (at < sent.Length)
            {
                bool text = random.Next(4) == 0;
                int length = Math.Min(sent.Length - at, random.Next(3) == 0 ? random.Next(0, 8) : random.Next(1, 70_000));
                for (int i = at; i < at + length; i++)
                {
                    sent[i] = text ? (byte)random.Next(0x20, 0x7F) : (byte)random.Next(256);
                }

                // One message in one or more frames (the later ones continuations).
                int fragments = random.Next(1, 4);
                for (int f = 0; f < fragments; f++)
                {
                    int end = f == fragments - 1 ? at + length : at + (length * (f + 1) / fragments);
                    int start = at + (length * f / fragments);
                    await server.SendAsync(sent.AsMemory(start, end - start), text ? WebSocketMessageType.Text : WebSocketMessageType.Binary, f == fragments - 1, cancellationToken);
                }

                at += length;
                messages++;
            }

            await server.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, cancellationToken);
        }, cancellationToken);

        var received = new MemoryStream();
        byte[] buffer = new byte[70_000];
        int read;
        while ((read = await stream.ReadAsync(buffer.AsMemory(0, random.Next(1, buffer.Length)), cancellationToken)) > 0)
        {
            received.Write(buffer, 0, read);
        }

        await sending;
        TestContext.Out.WriteLine($"{sent.Length} bytes in {messages} messages");
        Assert.That(received.ToArray(), Is.EqualTo(sent), $"seed {seed}");
    }
}
