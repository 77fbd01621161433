// Usage: PipeCost <endpoint> [connections=10000] [rounds=20]
// Against an echo server at <endpoint>, for each mode (handler, channel, pipes): opens the
// connections, reports the managed memory they added per connection (GC.GetTotalMemory after a
// full collection, engine included) and then times rounds in which every connection posts one
// 64-byte packet and the application receives every echo; packets/s = connections * rounds / time.
using System.Diagnostics;
using System.IO.Pipelines;
using NetZlink.Engine;

string endpoint = args[0];
int connections = args.Length > 1 ? int.Parse(args[1]) : 10_000;
int rounds = args.Length > 2 ? int.Parse(args[2]) : 20;
byte[] packet = new byte[64];
packet[3] = 60;

foreach (string mode in new[] { "handler", "channel", "pipes" })
{
    long received = 0;
    using var roundDone = new SemaphoreSlim(0);
    long target = 0;
    void Count(long packets)
    {
        long now = Interlocked.Add(ref received, packets);
        if (now - packets < Volatile.Read(ref target) && now >= Volatile.Read(ref target))
        {
            roundDone.Release();
        }
    }

    GC.Collect();
    GC.WaitForPendingFinalizers();
    long before = GC.GetTotalMemory(forceFullCollection: true);
    await using var engine = new ClientEngine(connections, new EngineOptions { Endpoints = [endpoint], ShardCount = 2, RaiseDescriptorLimit = true });
    var connected = new List<Connection>();
    Task reading = Task.CompletedTask;
    var pipeReaders = new List<Task>();
    if (mode == "handler")
    {
        engine.Start(_ => new CountingHandler(Count, connected));
    }
    else
    {
        EngineChannel channel = engine.StartChannel(new EngineChannelOptions { ConnectionPipes = mode == "pipes" });
        reading = Task.Run(async () =>
        {
            await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
            {
                using (e)
                {
                    if (e.Kind == EngineEventKind.Connected)
                    {
                        lock (connected)
                        {
                            connected.Add(e.Connection);
                            if (e.Pipe is { } pipe)
                            {
                                pipeReaders.Add(ReadPipe(pipe.Input, Count));
                            }
                        }
                    }
                    else if (e.Kind == EngineEventKind.Packet)
                    {
                        Count(1);
                    }
                }
            }
        });
    }

    await engine.ConnectsResolved;
    while (true)
    {
        lock (connected)
        {
            if (connected.Count == connections)
            {
                break;
            }
        }

        await Task.Delay(10);
    }

    GC.Collect();
    GC.WaitForPendingFinalizers();
    long after = GC.GetTotalMemory(forceFullCollection: true);

    async Task Round()
    {
        Volatile.Write(ref target, Volatile.Read(ref received) + connections);
        foreach (Connection c in connected)
        {
            while (!engine.TrySend(c, packet))
            {
                await Task.Yield();
            }
        }

        await roundDone.WaitAsync();
    }

    for (int i = 0; i < 3; i++)
    {
        await Round();
    }

    var clock = Stopwatch.StartNew();
    for (int i = 0; i < rounds; i++)
    {
        await Round();
    }

    clock.Stop();
    Console.WriteLine($"{mode,-8} {connections} connections: {(after - before) / (double)connections,8:0} managed bytes per connection, {connections * (double)rounds / clock.Elapsed.TotalSeconds,10:0} packets/s ({rounds} rounds in {clock.Elapsed.TotalMilliseconds:0} ms)");
    await engine.StopAsync();
    await reading;
    await Task.WhenAll(pipeReaders);
}

static async Task ReadPipe(PipeReader input, Action<long> count)
{
    long carry = 0;
    while (true)
    {
        ReadResult result = await input.ReadAsync();
        carry += result.Buffer.Length;
        input.AdvanceTo(result.Buffer.End);
        if (carry >= 64)
        {
            count(carry / 64);
            carry %= 64;
        }

        if (result.IsCompleted)
        {
            return;
        }
    }
}

sealed class CountingHandler(Action<long> count, List<Connection> connected) : IConnectionHandler
{
    public void OnConnected(EngineShard shard, Connection connection)
    {
        lock (connected)
        {
            connected.Add(connection);
        }
    }

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure) => throw new IOException($"connect failed: {failure}");

    public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => count(1);

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
    }

    public void OnPass(EngineShard shard)
    {
    }
}
