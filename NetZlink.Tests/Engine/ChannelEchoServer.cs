// An echo server written with the channel API: a ServerEngine whose application loop reads its
// EngineChannel and writes every packet back with WriteAsync. It records each connection's
// received stream and events, so tests can check what the server saw.
namespace NetZlink.Tests.Engine;

internal sealed class ChannelEchoServer : IAsyncDisposable
{
    private readonly Task _loop;
    private readonly bool _echo;

    public ChannelEchoServer(int endpoints, EngineChannelOptions? channelOptions = null, bool echo = true)
        : this(new ServerEngine(new EngineOptions { Endpoints = Enumerable.Repeat("tcp://127.0.0.1:*", endpoints).ToArray() }), channelOptions, echo)
    {
    }

    /// <summary>An echo server on an engine made by the caller (not started yet); with <paramref name="echo"/> false it only records.</summary>
    public ChannelEchoServer(ServerEngine engine, EngineChannelOptions? channelOptions = null, bool echo = true)
    {
        _echo = echo;
        Engine = engine;
        Channel = Engine.StartChannel(channelOptions);
        _loop = Task.Run(ReadAll);
    }

    public ServerEngine Engine { get; }

    public EngineChannel Channel { get; }

    /// <summary>Per connection index: bytes received, in order.</summary>
    public ConcurrentDictionary<int, MemoryStream> Received { get; } = new();

    public ConcurrentDictionary<int, int> Connects { get; } = new();

    public ConcurrentDictionary<int, int> Disconnects { get; } = new();

    /// <summary>Packet events read.</summary>
    public long Packets;

    /// <summary>Packets whose echo WriteAsync refused (the engine was stopping).</summary>
    public long EchoesRefused;

    /// <summary>Completes when the reader has completed (with its exception, if any).</summary>
    public Task Finished => _loop;

    public async ValueTask DisposeAsync()
    {
        await Channel.DisposeAsync();
        await Engine.DisposeAsync();
        try
        {
            await _loop.WaitAsync(TimeSpan.FromSeconds(20));
        }
        catch (Exception e) when (e is not TimeoutException)
        {
            // A faulted reader is the test's concern, not the server's.
        }
    }

    private async Task ReadAll()
    {
        await foreach (EngineEvent e in Channel.Reader.ReadAllAsync())
        {
            using (e)
            {
                switch (e.Kind)
                {
                    case EngineEventKind.Connected:
                        Connects.AddOrUpdate(e.Connection.Index, 1, (_, n) => n + 1);
                        Received[e.Connection.Index] = new MemoryStream();
                        break;
                    case EngineEventKind.Packet:
                        Received[e.Connection.Index].Write(e.Packet);
                        Interlocked.Increment(ref Packets);
                        if (_echo && !await Channel.SendAsync(e.Connection, e.PacketMemory))
                        {
                            Interlocked.Increment(ref EchoesRefused);
                        }

                        break;
                    case EngineEventKind.Disconnected:
                        Disconnects.AddOrUpdate(e.Connection.Index, 1, (_, n) => n + 1);
                        break;
                }
            }
        }
    }
}
