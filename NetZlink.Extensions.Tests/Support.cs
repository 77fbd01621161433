// What the tests share: a logger provider that keeps every entry, a local echo server, a port
// nothing listens on, and waiting for a condition.
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using NetZlink.Engine;

namespace NetZlink.Extensions.Tests;

/// <summary>One log entry as a provider saw it.</summary>
internal sealed record LogEntry(string Category, LogLevel Level, EventId EventId, string Message, Exception? Exception);

/// <summary>Keeps every entry at every level.</summary>
internal sealed class CapturingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<LogEntry> _entries = new();

    public IReadOnlyList<LogEntry> Entries => [.. _entries];

    public IEnumerable<LogEntry> WithId(int id) => Entries.Where(e => e.EventId.Id == id);

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    /// <summary>A factory that logs every level to this provider only.</summary>
    public ILoggerFactory Factory() => LoggerFactory.Create(b => b.SetMinimumLevel(LogLevel.Trace).AddProvider(this));

    public string Dump() => string.Join("\n", Entries.Select(e => $"{e.EventId.Id} {e.Level} {e.Category}: {e.Message}"));

    private sealed class Logger(CapturingLoggerProvider owner, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => owner._entries.Enqueue(new LogEntry(category, logLevel, eventId, formatter(state, exception), exception));
    }
}

internal static class Local
{
    /// <summary>A tcp endpoint on loopback where nothing listens (connects are refused at once).</summary>
    public static string RefusingEndpoint()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return $"tcp://127.0.0.1:{port}";
    }

    /// <summary>A server engine on a free loopback port that echoes every packet; dispose it to stop it.</summary>
    public static ServerEngine EchoServer(string? name = null, ILoggerFactory? logging = null)
    {
        var server = new ServerEngine(new EngineOptions { Endpoints = ["tcp://127.0.0.1:*"], Name = name, LoggerFactory = logging });
        server.Start(_ => new EchoHandler());
        return server;
    }

    /// <summary>Polls <paramref name="condition"/> until it holds or <paramref name="patience"/> passes.</summary>
    public static async Task Until(Func<bool> condition, string what, TimeSpan? patience = null)
    {
        DateTime deadline = DateTime.UtcNow + (patience ?? TimeSpan.FromSeconds(10));
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"timed out waiting for {what}");
            }

            await Task.Delay(20);
        }
    }

    /// <summary>[u32 big-endian length][body], the engine's default packet.</summary>
    public static byte[] Packet(string body)
    {
        byte[] bytes = System.Text.Encoding.UTF8.GetBytes(body);
        byte[] packet = new byte[4 + bytes.Length];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)bytes.Length);
        bytes.CopyTo(packet, 4);
        return packet;
    }

    /// <summary>Host and port of <c>tcp://host:port</c>.</summary>
    public static (string Host, int Port) Split(string endpoint)
    {
        string address = endpoint["tcp://".Length..];
        int colon = address.LastIndexOf(':');
        return (address[..colon], int.Parse(address[(colon + 1)..], System.Globalization.CultureInfo.InvariantCulture));
    }

    /// <summary>The socket address of <c>tcp://address:port</c>.</summary>
    public static IPEndPoint At(string endpoint)
    {
        (string host, int port) = Split(endpoint);
        return new IPEndPoint(IPAddress.Parse(host), port);
    }

    private sealed class EchoHandler : QuietHandler
    {
        public override void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet) => shard.Send(connection, packet);
    }
}

/// <summary>A handler that does nothing; tests override what they need.</summary>
internal class QuietHandler : IConnectionHandler
{
    public virtual void OnConnected(EngineShard shard, Connection connection)
    {
    }

    public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure)
    {
    }

    public virtual void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
    {
    }

    public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
    {
    }

    public virtual void OnPass(EngineShard shard)
    {
    }
}

/// <summary>A clock that moves only when told.</summary>
internal sealed class ManualClock : TimeProvider
{
    private long _ticks = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero).UtcTicks;

    public override DateTimeOffset GetUtcNow() => new(Interlocked.Read(ref _ticks), TimeSpan.Zero);

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
}

/// <summary>What the hosting tests do with a host.</summary>
internal static class Hosts
{
    /// <summary>
    /// A host whose configuration holds <paramref name="settings"/> under <paramref name="section"/>
    /// (keys relative to it), with <paramref name="clock"/> as its TimeProvider when given; <paramref name="register"/>
    /// adds the NetZlink services (from the section), then every health check is added.
    /// </summary>
    public static IHost Build(string section, IEnumerable<(string Key, string Value)> settings, TimeProvider? clock, Action<IServiceCollection, IConfigurationSection> register)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings.Select(s => new KeyValuePair<string, string?>($"{section}:{s.Key}", s.Value)));
        if (clock is not null)
        {
            builder.Services.AddSingleton(clock);
        }

        register(builder.Services, builder.Configuration.GetSection(section));
        builder.Services.AddHealthChecks().AddNetZlinkHealthChecks();
        return builder.Build();
    }

    /// <summary>The start's refusal (all validation failures in one exception); fails the test when the host starts.</summary>
    public static async Task<OptionsValidationException> Refusal(IHost host)
    {
        try
        {
            await host.StartAsync();
        }
        catch (OptionsValidationException e)
        {
            return e;
        }
        catch (AggregateException e) when (e.InnerExceptions.All(i => i is OptionsValidationException))
        {
            return new OptionsValidationException("all", typeof(object), e.InnerExceptions.SelectMany(i => ((OptionsValidationException)i).Failures));
        }

        Assert.Fail("the host must not start with these settings");
        throw new InvalidOperationException();
    }

    /// <summary>The entry of the health check <paramref name="name"/> in a report made now.</summary>
    public static async Task<HealthReportEntry> CheckAsync(IHost host, string name)
    {
        HealthReport report = await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();
        return report.Entries[name];
    }

    /// <summary>A check of <paramref name="name"/> now has <paramref name="status"/> and a description containing <paramref name="description"/>.</summary>
    public static async Task Expect(IHost host, string name, HealthStatus status, string description)
    {
        HealthReportEntry entry = await CheckAsync(host, name);
        Assert.Multiple(() =>
        {
            Assert.That(entry.Status, Is.EqualTo(status), entry.Description);
            Assert.That(entry.Description, Does.Contain(description));
        });
    }
}
