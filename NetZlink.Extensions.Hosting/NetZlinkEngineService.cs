// One hosted engine: made from its validated options when first asked for (or when the host
// starts), started with the host, stopped with the host's lifetime and disposed with the
// container. Without a registered handler the engine is read through a channel (Channel).
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

/// <summary>
/// A <see cref="ClientEngine"/> or <see cref="ServerEngine"/> that runs with the host (registered by
/// <c>AddNetZlinkClientEngine</c>, <c>AddNetZlinkServerEngine</c> and their keyed forms). It starts
/// the engine when the host starts and stops it when the host stops, within the host's shutdown
/// timeout; the container disposes it.
/// </summary>
/// <typeparam name="TEngine"><see cref="ClientEngine"/> or <see cref="ServerEngine"/>.</typeparam>
public sealed partial class NetZlinkEngineService<TEngine> : IHostedService, IAsyncDisposable, IDisposable, INetZlinkEngineService
    where TEngine : StreamEngine
{
    private readonly IServiceProvider _services;
    private readonly Func<IServiceProvider, EngineShard, IConnectionHandler>? _handlerFactory;
    private readonly string _optionsName;
    private NetZlinkEngineOptions? _options;
    private NetZlinkHealthState? _health;
    private readonly ILogger _logger;
    private readonly TimeProvider _time;
    private readonly Lock _gate = new();
    private TEngine? _engine;
    private EngineChannel? _channel;
    private long _startedAtTicks; // UTC ticks; 0 until started (one read, never torn)

    internal NetZlinkEngineService(IServiceProvider services, string? key, string optionsName, Func<IServiceProvider, EngineShard, IConnectionHandler>? handlerFactory)
    {
        _services = services;
        Key = key;
        _handlerFactory = handlerFactory;
        _optionsName = optionsName;
        _logger = services.GetService<ILoggerFactory>()?.CreateLogger("NetZlink.Extensions.Hosting") ?? NullLogger.Instance;
        _time = services.GetService<TimeProvider>() ?? TimeProvider.System;
    }

    /// <summary>The registration's key; null for the engine registered without one.</summary>
    public string? Key { get; }

    /// <summary>The engine's name: <see cref="EngineOptions.Name"/>, else the key, else the engine type's name.</summary>
    public string Name => Options.Engine.Name ?? Key ?? typeof(TEngine).Name;

    /// <summary>
    /// The engine, made on first use from the validated options (it connects or binds only when the
    /// host starts it).
    /// </summary>
    /// <exception cref="ArgumentException">The options are invalid or a host name does not resolve (the engine's constructor).</exception>
    public TEngine Engine
    {
        get
        {
            lock (_gate)
            {
                return _engine ??= Create();
            }
        }
    }

    /// <summary>
    /// The channel the engine is read and written through, once the host has started it; only for an
    /// engine registered without a handler (<c>UseHandler</c>).
    /// </summary>
    /// <exception cref="InvalidOperationException">The host has not started the engine yet, or it runs with a handler.</exception>
    public EngineChannel Channel => Volatile.Read(ref _channel) ?? throw new InvalidOperationException(
        _handlerFactory is not null
            ? $"NetZlink engine '{Name}' runs with a handler (UseHandler), not a channel."
            : $"NetZlink engine '{Name}' has not been started yet: its channel exists once the host has started (read it in ExecuteAsync, not in a constructor).");

    /// <summary>When the host started the engine; null before.</summary>
    public DateTimeOffset? StartedAt => Volatile.Read(ref _startedAtTicks) is long ticks and not 0 ? new DateTimeOffset(ticks, TimeSpan.Zero) : null;

    StreamEngine? INetZlinkEngineService.StartedEngine => StartedAt is null ? null : Volatile.Read(ref _engine);

    int INetZlinkEngineService.ExpectedConnections => (Options as NetZlinkClientEngineOptions)?.ConnectionCount ?? 0;

    bool INetZlinkEngineService.IsClient => typeof(TEngine) == typeof(ClientEngine);

    TimeProvider INetZlinkEngineService.Time => _time;

    /// <summary>The health check's memory (counters at the previous check).</summary>
    internal NetZlinkHealthState Health => LazyInitializer.EnsureInitialized(ref _health, () => new NetZlinkHealthState(this, Options.Health));

    /// <summary>
    /// The validated options, read on first use: not in the constructor, which runs when the host
    /// gathers its hosted services, before it validates every option at start.
    /// </summary>
    private NetZlinkEngineOptions Options => _options ??= typeof(TEngine) == typeof(ClientEngine)
        ? _services.GetRequiredService<IOptionsMonitor<NetZlinkClientEngineOptions>>().Get(_optionsName)
        : _services.GetRequiredService<IOptionsMonitor<NetZlinkServerEngineOptions>>().Get(_optionsName);

    NetZlinkHealthState INetZlinkEngineService.Health => Health;

    /// <summary>Starts the engine: its connections (client) or its bound endpoints (server) open now.</summary>
    public Task StartAsync(CancellationToken cancellationToken)
    {
        TEngine engine = Engine;
        if (_handlerFactory is { } factory)
        {
            IConnectionHandler Handler(EngineShard shard) => factory(_services, shard);
            if (engine is ClientEngine client)
            {
                client.Start(Handler);
            }
            else
            {
                (engine as ServerEngine)!.Start(Handler);
            }
        }
        else
        {
            Volatile.Write(ref _channel, engine.StartChannel(Options.Channel));
        }

        Volatile.Write(ref _startedAtTicks, _time.GetUtcNow().UtcTicks);
        return Task.CompletedTask;
    }

    /// <summary>
    /// Drains the engine (<see cref="StreamEngine.DrainAsync"/>): posts are refused, every frame
    /// already accepted is flushed to its connection, then every shard stops and every connection
    /// ends (EngineStopped). <paramref name="cancellationToken"/> (the host's shutdown timeout) is
    /// the deadline: frames still held then are counted as dropped
    /// (<see cref="SendQueueCounters.DroppedDrainDeadline"/>), and shards that have not stopped are
    /// left to finish on their own, which is logged.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        TEngine? engine;
        lock (_gate)
        {
            engine = _engine;
        }

        if (engine is null)
        {
            return;
        }

        try
        {
            _ = await engine.DrainAsync(Timeout.InfiniteTimeSpan, cancellationToken).ConfigureAwait(false);
            await engine.StopAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            LogStopTimedOut(_logger, Name);
        }
    }

    /// <summary>Disposes the engine (it stops first if it still runs).</summary>
    public async ValueTask DisposeAsync()
    {
        TEngine? engine;
        lock (_gate)
        {
            engine = _engine;
        }

        if (engine is not null)
        {
            await engine.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Disposes the engine (it stops first if it still runs), waiting for its shards up to <see cref="StreamEngine.DisposeTimeout"/>.</summary>
    public void Dispose()
    {
        TEngine? engine;
        lock (_gate)
        {
            engine = _engine;
        }

        engine?.Dispose();
    }

    private TEngine Create()
    {
        EngineOptions engine = Options.Engine;
        engine.LoggerFactory ??= _services.GetService<ILoggerFactory>();
        engine.Name ??= Key;
        StreamEngine made = typeof(TEngine) == typeof(ClientEngine)
            ? new ClientEngine(((NetZlinkClientEngineOptions)Options).ConnectionCount, engine)
            : new ServerEngine(engine);
        return (TEngine)made;
    }

    [LoggerMessage(EventId = 1100, EventName = "HostedStopTimedOut", Level = LogLevel.Warning,
        Message = "NetZlink engine '{Engine}' did not stop within the host's shutdown timeout; its shards finish on their own and the container disposes it")]
    private static partial void LogStopTimedOut(ILogger logger, string engine);
}

/// <summary>What the health check and the registration need of a hosted engine, whatever its type.</summary>
internal interface INetZlinkEngineService
{
    string Name { get; }

    StreamEngine? StartedEngine { get; }

    DateTimeOffset? StartedAt { get; }

    int ExpectedConnections { get; }

    bool IsClient { get; }

    TimeProvider Time { get; }

    NetZlinkHealthState Health { get; }
}
