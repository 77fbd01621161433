// Registration of hosted engines. Each engine is a NetZlinkEngineService<TEngine> (also its
// IHostedService) and its TEngine, without a key or under a string key, with options named by the
// key, bound from a configuration section and/or configured in code, and checked at start.
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink;
using NetZlink.Engine;
using NetZlink.Extensions.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers NetZlink engines and their health checks with a host (see docs/hosting.md).</summary>
public static partial class NetZlinkServiceCollectionExtensions
{
    /// <summary>
    /// Registers a <see cref="ClientEngine"/> (and its <see cref="NetZlinkEngineService{TEngine}"/>)
    /// that starts and stops with the host, with settings bound from <paramref name="configuration"/>
    /// (a section: <c>Endpoints</c>, <c>ConnectionCount</c>, any <see cref="EngineOptions"/> setting,
    /// <c>Channel</c>, <c>Health</c>) and then <paramref name="configure"/>, checked when the host starts.
    /// </summary>
    public static NetZlinkEngineBuilder AddNetZlinkClientEngine(this IServiceCollection services, IConfiguration configuration, Action<NetZlinkClientEngineOptions>? configure = null)
        => Add<ClientEngine, NetZlinkClientEngineOptions>(services, null, configuration, configure);

    /// <summary>Registers a <see cref="ClientEngine"/> configured in code (see the overload with a configuration section).</summary>
    public static NetZlinkEngineBuilder AddNetZlinkClientEngine(this IServiceCollection services, Action<NetZlinkClientEngineOptions> configure)
        => Add<ClientEngine, NetZlinkClientEngineOptions>(services, null, null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>
    /// Registers a <see cref="ClientEngine"/> under <paramref name="key"/> (<c>[FromKeyedServices(key)]</c>,
    /// <c>GetRequiredKeyedService</c>); several keys make several engines, each with its own options
    /// (named <paramref name="key"/>).
    /// </summary>
    public static NetZlinkEngineBuilder AddKeyedNetZlinkClientEngine(this IServiceCollection services, string key, IConfiguration configuration, Action<NetZlinkClientEngineOptions>? configure = null)
        => Add<ClientEngine, NetZlinkClientEngineOptions>(services, RequireKey(key), configuration, configure);

    /// <summary>Registers a <see cref="ClientEngine"/> under <paramref name="key"/>, configured in code.</summary>
    public static NetZlinkEngineBuilder AddKeyedNetZlinkClientEngine(this IServiceCollection services, string key, Action<NetZlinkClientEngineOptions> configure)
        => Add<ClientEngine, NetZlinkClientEngineOptions>(services, RequireKey(key), null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>
    /// Registers a <see cref="ServerEngine"/> (and its <see cref="NetZlinkEngineService{TEngine}"/>) that
    /// binds when the host starts and stops with it, with settings bound from
    /// <paramref name="configuration"/> and then <paramref name="configure"/>, checked when the host starts.
    /// </summary>
    public static NetZlinkEngineBuilder AddNetZlinkServerEngine(this IServiceCollection services, IConfiguration configuration, Action<NetZlinkServerEngineOptions>? configure = null)
        => Add<ServerEngine, NetZlinkServerEngineOptions>(services, null, configuration, configure);

    /// <summary>Registers a <see cref="ServerEngine"/> configured in code.</summary>
    public static NetZlinkEngineBuilder AddNetZlinkServerEngine(this IServiceCollection services, Action<NetZlinkServerEngineOptions> configure)
        => Add<ServerEngine, NetZlinkServerEngineOptions>(services, null, null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>Registers a <see cref="ServerEngine"/> under <paramref name="key"/>.</summary>
    public static NetZlinkEngineBuilder AddKeyedNetZlinkServerEngine(this IServiceCollection services, string key, IConfiguration configuration, Action<NetZlinkServerEngineOptions>? configure = null)
        => Add<ServerEngine, NetZlinkServerEngineOptions>(services, RequireKey(key), configuration, configure);

    /// <summary>Registers a <see cref="ServerEngine"/> under <paramref name="key"/>, configured in code.</summary>
    public static NetZlinkEngineBuilder AddKeyedNetZlinkServerEngine(this IServiceCollection services, string key, Action<NetZlinkServerEngineOptions> configure)
        => Add<ServerEngine, NetZlinkServerEngineOptions>(services, RequireKey(key), null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>
    /// Registers one <see cref="ZlinkContext"/> for the application's own sockets (a singleton the
    /// container disposes), unless one is registered already. Hosted engines make their own.
    /// </summary>
    public static IServiceCollection AddNetZlinkContext(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        bool ours = !services.Any(d => d.ServiceType == typeof(ZlinkContext));
        services.TryAddSingleton(_ => new ZlinkContext());
        if (!services.Any(d => d.ServiceType == typeof(HostShutdown)))
        {
            // Bounds the disposal of the context made here (and the hosted sockets' linger, the
            // gateways' drain) by the host's shutdown timeout; it starts before the hosted kinds.
            services.AddSingleton(sp => new HostShutdown(sp, ours));
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<HostShutdown>());
        }

        return services;
    }

    /// <summary>
    /// Adds a health check for every engine, gateway, receiver and socket registered so far (register
    /// them first), named <c>netzlink</c> for the engine without a key and <c>netzlink:{key}</c> for a
    /// keyed one (with <c>:client</c> or <c>:server</c> after it when a client and a server engine share
    /// the key, or both have none); <c>netzlink-gateway</c> and <c>netzlink-gateway:{key}</c> for
    /// gateways, <c>netzlink-receiver</c>, <c>netzlink-receiver:{key}</c> for receivers and
    /// <c>netzlink-socket:{key}</c> for sockets.
    /// The rules (Healthy, Degraded, Unhealthy) are in docs/hosting.md.
    /// </summary>
    /// <param name="builder">The health checks builder (<c>services.AddHealthChecks()</c>).</param>
    /// <param name="tags">Tags for every check added.</param>
    public static IHealthChecksBuilder AddNetZlinkHealthChecks(this IHealthChecksBuilder builder, params string[] tags)
    {
        ArgumentNullException.ThrowIfNull(builder);
        EngineRegistration[] registrations = builder.Services
            .Where(d => d.ServiceType == typeof(EngineRegistration) && d.ImplementationInstance is EngineRegistration)
            .Select(d => (EngineRegistration)d.ImplementationInstance!)
            .ToArray();
        int gateways = AddHostedHealthChecks(builder, tags);
        if (registrations.Length == 0 && gateways == 0)
        {
            throw new InvalidOperationException("AddNetZlinkHealthChecks found no NetZlink engine, gateway, receiver or socket: call AddNetZlinkClientEngine/AddNetZlinkServerEngine/AddNetZlinkGateway/AddNetZlinkReceiver/AddNetZlinkSocket (or their keyed forms) first.");
        }

        foreach (EngineRegistration registration in registrations)
        {
            string name = registration.Key is null ? "netzlink" : "netzlink:" + registration.Key;
            if (registrations.Any(r => r != registration && r.Key == registration.Key))
            {
                // A client and a server under the same key (or both without one): the kind tells them apart.
                name += registration.Server ? ":server" : ":client";
            }

            builder.Add(new HealthCheckRegistration(name, sp => new NetZlinkHealthCheck(registration.Resolve(sp)), failureStatus: null, tags));
        }

        return builder;
    }

    private static string RequireKey(string key)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(key);
        return key;
    }

    /// <summary>
    /// Registers options named <paramref name="optionsName"/>, bound from <paramref name="configuration"/>
    /// (and its settings of <paramref name="flat"/> from the section itself), then <paramref name="configure"/>,
    /// validated at start; returns the prefix that names the section's keys in failure lines.
    /// </summary>
    private static string BindOptions<TOptions>(IServiceCollection services, string optionsName, IConfiguration? configuration, Func<TOptions, object>? flat, Action<TOptions>? configure)
        where TOptions : class
    {
        OptionsBuilder<TOptions> options = services.AddOptions<TOptions>(optionsName);
        string keyPrefix = "";
        if (configuration is not null)
        {
            options.Configure(o =>
            {
                configuration.Bind(o);
                if (flat is not null)
                {
                    configuration.Bind(flat(o));
                }
            });
            keyPrefix = configuration is IConfigurationSection section && section.Path.Length > 0 ? section.Path + ":" : "";
        }

        if (configure is not null)
        {
            options.Configure(configure);
        }

        options.ValidateOnStart();
        return keyPrefix;
    }

    /// <summary>Refuses, when the host starts, the keys of <paramref name="configuration"/> that bind to nothing (ConfigurationKeyCheck.cs).</summary>
    private static void CheckKeys<TOptions>(IServiceCollection services, string optionsName, string keyPrefix, IConfiguration? configuration, SectionShape shape)
        where TOptions : class
    {
        if (configuration is not null)
        {
            services.AddSingleton<IValidateOptions<TOptions>>(new ConfigurationKeyValidator<TOptions>(optionsName, keyPrefix, configuration, shape));
        }
    }

    private static NetZlinkEngineBuilder Add<TEngine, TOptions>(IServiceCollection services, string? key, IConfiguration? configuration, Action<TOptions>? configure)
        where TEngine : StreamEngine
        where TOptions : NetZlinkEngineOptions
    {
        ArgumentNullException.ThrowIfNull(services);
        string optionsName = key ?? Options.Options.DefaultName;
        bool server = typeof(TEngine) == typeof(ServerEngine);
        if (services.Any(d => d.ImplementationInstance is EngineRegistration r && r.Key == key && r.Server == server))
        {
            throw new InvalidOperationException(key is null
                ? $"A {typeof(TEngine).Name} without a key is registered already: give further engines a key (AddKeyedNetZlink{(server ? "Server" : "Client")}Engine)."
                : $"A {typeof(TEngine).Name} with the key '{key}' is registered already.");
        }

        var registration = new EngineRegistration(key, optionsName, server);
        services.AddSingleton(registration);

        // The engine's settings sit in the section itself, beside ConnectionCount, Channel and Health.
        string keyPrefix = BindOptions(services, optionsName, configuration, o => o.Engine, configure);
        services.AddSingleton<IValidateOptions<TOptions>>(new SettingsValidator<TOptions>(optionsName, keyPrefix, NetZlinkOptionsValidator<TOptions>.Problems));
        string subject = server ? "server engine" : "client engine";
        CheckKeys<TOptions>(services, optionsName, keyPrefix, configuration, new SectionShape(subject, [typeof(TOptions), typeof(EngineOptions)], "Engine", "an engine setting"));

        NetZlinkEngineService<TEngine> Make(IServiceProvider sp) => new(sp, key, optionsName, registration.HandlerFactory);
        if (key is null)
        {
            services.AddSingleton(Make);
            services.AddSingleton(sp => sp.GetRequiredService<NetZlinkEngineService<TEngine>>().Engine);
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<NetZlinkEngineService<TEngine>>());
        }
        else
        {
            services.AddKeyedSingleton(key, (sp, _) => Make(sp));
            services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkEngineService<TEngine>>(k).Engine);
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredKeyedService<NetZlinkEngineService<TEngine>>(key));
        }

        return new NetZlinkEngineBuilder(services, registration);
    }
}
