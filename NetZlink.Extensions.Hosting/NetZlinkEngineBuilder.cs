// What AddNetZlinkClientEngine/AddNetZlinkServerEngine return: the registration, for the
// settings that are code rather than configuration (a connection handler).
using Microsoft.Extensions.DependencyInjection;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

/// <summary>One registered engine: its key, the name of its options, and <see cref="UseHandler"/>.</summary>
public sealed class NetZlinkEngineBuilder
{
    private readonly EngineRegistration _registration;

    internal NetZlinkEngineBuilder(IServiceCollection services, EngineRegistration registration)
    {
        Services = services;
        _registration = registration;
    }

    /// <summary>The service collection the engine is registered in.</summary>
    public IServiceCollection Services { get; }

    /// <summary>The key of a keyed engine; null for the one registered without a key.</summary>
    public string? Key => _registration.Key;

    /// <summary>
    /// The name of the engine's options (<c>services.AddOptions&lt;NetZlinkClientEngineOptions&gt;(OptionsName)</c>
    /// configures them further): the key, or <c>Options.DefaultName</c> without one.
    /// </summary>
    public string OptionsName => _registration.OptionsName;

    /// <summary>
    /// Runs the engine with a handler per shard instead of a channel: <paramref name="factory"/> is
    /// called once per shard when the host starts the engine, on the starting thread; the
    /// handler's callbacks then run on the shard's thread (docs/engine.md).
    /// </summary>
    public NetZlinkEngineBuilder UseHandler(Func<IServiceProvider, EngineShard, IConnectionHandler> factory)
    {
        ArgumentNullException.ThrowIfNull(factory);
        _registration.HandlerFactory = factory;
        return this;
    }
}

/// <summary>One engine registration, kept in the service collection so that the health checks can find every engine.</summary>
internal sealed class EngineRegistration(string? key, string optionsName, bool server)
{
    public string? Key { get; } = key;

    public string OptionsName { get; } = optionsName;

    public bool Server { get; } = server;

    public Func<IServiceProvider, EngineShard, IConnectionHandler>? HandlerFactory { get; set; }

    /// <summary>The hosted engine, whatever its type.</summary>
    public INetZlinkEngineService Resolve(IServiceProvider services)
        => Server ? Resolve<ServerEngine>(services) : Resolve<ClientEngine>(services);

    public NetZlinkEngineService<TEngine> Resolve<TEngine>(IServiceProvider services)
        where TEngine : StreamEngine
        => Key is null
            ? services.GetRequiredService<NetZlinkEngineService<TEngine>>()
            : services.GetRequiredKeyedService<NetZlinkEngineService<TEngine>>(Key);
}
