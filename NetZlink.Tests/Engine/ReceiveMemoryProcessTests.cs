// Receive memory follows the bytes that arrive, never what a header announces (docs/engine.md,
// "Receive memory"). The echo server of docs/engine.md runs in a child process under a 1 GiB heap
// limit (DOTNET_GCHeapHardLimit); 1,000 peers each announce a packet of just under 16 MiB and
// send 1 KB of it, and stay. The engine must stay up, honest clients must be echoed byte for byte
// meanwhile, and the child's peak memory must stay within the bounds below, with the default
// framer (the native library holds the partial packets) and with a custom framer (the managed
// PacketReassembler does). The custom framer used to set aside the whole announced packet as soon
// as its header arrived: 1,000 x 16 MiB, an OutOfMemoryException that faulted the whole engine.
using System.Globalization;
using System.Text.RegularExpressions;

namespace NetZlink.Tests.Engine;

public sealed partial class ReceiveMemoryProcessTests : EngineFixture
{
    private const int Announcers = 1000;
    private const int AnnouncedBody = (16 * 1024 * 1024) - 4 - 1; // just under the largest body
    private const int SentOfIt = 1024;

    // The bounds this test holds the child to (docs/engine.md, "Receive memory"): 1,000 peers'
    // 1 KB each is 1 MB; the rest is the runtime, the engine and the honest clients' echoes.
    private const long PeakManagedHeapBound = 64L * 1024 * 1024;
    private const long PeakRssBoundKb = 256L * 1024;

    [RequiresStreamClient]
    [TestCase("default")]
    [TestCase("custom")]
    [CancelAfter(120_000)]
    public async Task AThousandPeersAnnouncing16MiB_LeaveTheEngineUp_AndItsMemoryBounded(string framer)
    {
        Random random = Fuzz.Random(out _);
        using var child = StartChild(framer);
        string endpoint = (await child.StandardOutput.ReadLineAsync(Wait.Token))!;
        Assert.That(endpoint, Does.StartWith("ENDPOINT tcp://"), "the child bound its endpoint");
        var port = int.Parse(endpoint[(endpoint.LastIndexOf(':') + 1)..], CultureInfo.InvariantCulture);
        var server = new IPEndPoint(IPAddress.Loopback, port);

        var announcers = new List<Socket>(Announcers);
        try
        {
            var watch = Stopwatch.StartNew();
            byte[] announcement = new byte[4 + SentOfIt];
            BinaryPrimitives.WriteUInt32BigEndian(announcement, AnnouncedBody);
            random.NextBytes(announcement.AsSpan(4));
            for (int batch = 0; batch < Announcers; batch += 100)
            {
                announcers.AddRange(await Task.WhenAll(Enumerable.Range(0, 100).Select(_ => Announce(server, announcement))));
            }

            TestContext.Out.WriteLine($"{Announcers} announcers connected and sent in {watch.ElapsedMilliseconds} ms");

            // Honest clients, meanwhile: every echo exact.
            long[] honestBytes = await Task.WhenAll(Enumerable.Range(0, 4).Select(i => Converse(server, new Random(random.Next()))));

            // Until the engine has taken every peer (and, with the custom framer, every byte they sent).
            long minimumBytes = framer == "custom" ? (Announcers * (long)announcement.Length) + honestBytes.Sum() : 0;
            Match m;
            string report;
            do
            {
                await child.StandardInput.WriteLineAsync("report");
                report = (await child.StandardOutput.ReadLineAsync(Wait.Token))!;
                m = ReportLine().Match(report);
                Assert.That(m.Success, Is.True, report);
            }
            while (long.Parse(m.Groups["connected"].Value, CultureInfo.InvariantCulture) < Announcers + 4
                || long.Parse(m.Groups["bytes"].Value, CultureInfo.InvariantCulture) < minimumBytes);

            TestContext.Out.WriteLine($"{framer}: {report}");
            long peakHeap = long.Parse(m.Groups["heap"].Value, CultureInfo.InvariantCulture);
            long peakRss = long.Parse(m.Groups["rss"].Value, CultureInfo.InvariantCulture);
            Assert.Multiple(() =>
            {
                Assert.That(m.Groups["running"].Value, Is.EqualTo("True"), "the engine is up");
                Assert.That(m.Groups["fault"].Value, Is.EqualTo("none"), "no fault");
                Assert.That(m.Groups["budget"].Value, Is.EqualTo("0"), "1 KB per peer is within every budget");
                Assert.That(m.Groups["disconnects"].Value, Is.EqualTo("4"), "only the honest clients have gone");
                Assert.That(peakHeap, Is.LessThanOrEqualTo(PeakManagedHeapBound), "peak managed heap");
                Assert.That(peakRss, Is.LessThanOrEqualTo(PeakRssBoundKb), "peak resident memory (kB)");
            });
        }
        finally
        {
            foreach (Socket socket in announcers)
            {
                socket.Dispose();
            }

            await child.StandardInput.WriteLineAsync("stop");
            if (!child.WaitForExit(TimeSpan.FromSeconds(20)))
            {
                child.Kill(entireProcessTree: true);
            }
        }

        Assert.That(child.ExitCode, Is.Zero, await child.StandardError.ReadToEndAsync());
    }

    private static Process StartChild(string framer)
    {
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "NetZlink.Tests.EchoChild.dll"));
        info.ArgumentList.Add("tcp://127.0.0.1:*");
        info.ArgumentList.Add(framer);
        info.Environment["DOTNET_GCHeapHardLimit"] = "0x40000000";
        return Process.Start(info) ?? throw new InvalidOperationException("dotnet did not start");
    }

    private static async Task<Socket> Announce(IPEndPoint server, byte[] announcement)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server, Wait.Token);
        await socket.SendAsync(announcement, SocketFlags.None, Wait.Token);
        return socket;
    }

    /// <summary>Packets of random sizes (one of 1 MiB), each echo read back and compared byte for byte; returns the bytes sent.</summary>
    private static async Task<long> Converse(IPEndPoint server, Random random)
    {
        long sent = 0;
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server, Wait.Token);
        int[] bodies = [.. Enumerable.Range(0, 8).Select(_ => random.Next(1, 64 * 1024)), 1024 * 1024];
        foreach (int body in bodies)
        {
            byte[] packet = Fuzz.Bytes(random, 4 + body);
            BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)body);
            await socket.SendAsync(packet, SocketFlags.None, Wait.Token);
            byte[] echo = new byte[packet.Length];
            for (int got = 0; got < echo.Length;)
            {
                int n = await socket.ReceiveAsync(echo.AsMemory(got), SocketFlags.None, Wait.Token);
                Assert.That(n, Is.Positive, "the server closed an honest connection");
                got += n;
            }

            Assert.That(echo, Is.EqualTo(packet), $"the echo of a {packet.Length}-byte packet");
            sent += packet.Length;
        }

        return sent;
    }

    [GeneratedRegex(@"^REPORT running=(?<running>\w+) fault=(?<fault>\w+) peak_heap=(?<heap>\d+) peak_rss_kb=(?<rss>\d+) budget_closed=(?<budget>\d+) connected=(?<connected>\d+) disconnects=(?<disconnects>\d+) packets=\d+ bytes_in=(?<bytes>\d+)$")]
    private static partial Regex ReportLine();
}
