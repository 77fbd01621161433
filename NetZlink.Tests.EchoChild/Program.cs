// The echo server of docs/engine.md (a ServerEngine read and written through its channel) as a
// process of its own, so a test can run it under DOTNET_GCHeapHardLimit and watch it from outside.
//   args: <endpoint> <framer: default | custom>
//   stdout: "ENDPOINT <bound endpoint>" once bound; on each "report" line read from stdin, one
//   "REPORT running=<bool> fault=<none|type> peak_heap=<bytes> peak_rss_kb=<kB> budget_closed=<n>
//   connected=<n> disconnects=<n> packets=<n> bytes_in=<n>" line (engine counters). Stdin closed or "stop": the engine stops and the process exits.
// The peak managed heap is sampled every 2 ms (GC.GetTotalMemory); the peak RSS is the kernel's
// VmHWM, which misses nothing.
using System.Buffers.Binary;
using System.Globalization;
using NetZlink.Engine;

var options = new EngineOptions { Endpoints = [args[0]] };
if (args[1] == "custom")
{
    options.Framer = new U32Framer();
}

await using var server = new ServerEngine(options);
EngineChannel serverChannel = server.StartChannel();
long peakHeap = 0;
using var sampling = new CancellationTokenSource();
Task sampler = Task.Run(async () =>
{
    while (!sampling.IsCancellationRequested)
    {
        long heap = GC.GetTotalMemory(forceFullCollection: false);
        if (heap > Interlocked.Read(ref peakHeap))
        {
            Interlocked.Exchange(ref peakHeap, heap);
        }

        await Task.Delay(2).ConfigureAwait(false);
    }
});

// docs/engine.md's loop, as printed there.
Task echo = Task.Run(async () =>
{
    await foreach (EngineEvent e in serverChannel.Reader.ReadAllAsync())
    {
        using (e)
        {
            if (e.Kind == EngineEventKind.Packet)
            {
                await serverChannel.SendAsync(e.Connection, e.PacketMemory);
            }
        }
    }
});

Console.WriteLine($"ENDPOINT {server.BoundEndpoints[0]}");
while (Console.ReadLine() is string line && line != "stop")
{
    if (line == "report")
    {
        EngineCounters c = server.ReadCounters();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"REPORT running={server.IsRunning} fault={server.Fault?.InnerException?.GetType().Name ?? server.Fault?.GetType().Name ?? "none"} peak_heap={Interlocked.Read(ref peakHeap)} peak_rss_kb={PeakRssKb()} budget_closed={c.ReceiveBudgetExceeded} connected={c.Connected} disconnects={c.Disconnects} packets={c.PacketsReceived} bytes_in={c.BytesReceived}"));
    }
}

await server.StopAsync();
await echo;
await sampling.CancelAsync();
await sampler;
return 0;

static long PeakRssKb()
{
    foreach (string line in File.ReadLines("/proc/self/status"))
    {
        if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
        {
            return long.Parse(line["VmHWM:".Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture);
        }
    }

    return -1;
}

/// <summary>[u32 BE body length][body] through a framer of its own: RAW framing and the managed PacketReassembler.</summary>
internal sealed class U32Framer : IPacketFramer
{
    public int HeaderSize => 4;

    public int GetPacketLength(ReadOnlySpan<byte> header)
    {
        uint body = BinaryPrimitives.ReadUInt32BigEndian(header);
        return body > int.MaxValue - 4 ? -1 : (int)body + 4;
    }
}
