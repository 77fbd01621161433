// Registration of hosted receivers and plain sockets, and what every hosted service-layer kind
// (gateway, receiver, socket) shares: one instance per key (or one without a key), options named
// by the key, bound from a configuration section and/or configured in code and checked at start,
// the shared ZlinkContext, the hosted service and its health check.
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink;
using NetZlink.Extensions.Hosting;
using NetZlink.Services;

namespace Microsoft.Extensions.DependencyInjection;

public static partial class NetZlinkServiceCollectionExtensions
{
    /// <summary>
    /// Registers a <see cref="ZlinkReceiver"/> and its <see cref="NetZlinkReceiverService"/> (the hosted
    /// service that binds it, connects it to the registry and registers its services when the host
    /// starts, unregisters them when the host begins to stop and disposes it when the host stops), on
    /// the application's <see cref="ZlinkContext"/>, with settings bound from <paramref name="configuration"/>
    /// (a section: <c>BindEndpoint</c>, <c>RegistryEndpoint</c>, <c>Services</c>, any
    /// <see cref="ReceiverOptions"/> setting, <c>Health</c>) and then <paramref name="configure"/>,
    /// checked when the host starts. The application reads <see cref="ZlinkReceiver.Requests"/>.
    /// </summary>
    public static IServiceCollection AddNetZlinkReceiver(this IServiceCollection services, IConfiguration configuration, Action<NetZlinkReceiverOptions>? configure = null)
        => AddReceiver(services, null, configuration ?? throw new ArgumentNullException(nameof(configuration)), configure);

    /// <summary>Registers a receiver configured in code (see the overload with a configuration section).</summary>
    public static IServiceCollection AddNetZlinkReceiver(this IServiceCollection services, Action<NetZlinkReceiverOptions> configure)
        => AddReceiver(services, null, null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>
    /// Registers a receiver under <paramref name="key"/> (<c>[FromKeyedServices(key)] ZlinkReceiver</c>,
    /// <c>NetZlinkReceiverService</c>); several keys make several receivers, each with its own options.
    /// </summary>
    public static IServiceCollection AddKeyedNetZlinkReceiver(this IServiceCollection services, string key, IConfiguration configuration, Action<NetZlinkReceiverOptions>? configure = null)
        => AddReceiver(services, RequireKey(key), configuration ?? throw new ArgumentNullException(nameof(configuration)), configure);

    /// <summary>Registers a receiver under <paramref name="key"/>, configured in code.</summary>
    public static IServiceCollection AddKeyedNetZlinkReceiver(this IServiceCollection services, string key, Action<NetZlinkReceiverOptions> configure)
        => AddReceiver(services, RequireKey(key), null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>
    /// Registers a <see cref="ZlinkSocket"/> under <paramref name="key"/> (<c>[FromKeyedServices(key)] ZlinkSocket</c>)
    /// and its <see cref="NetZlinkSocketService"/> (the hosted service that binds and connects it when the
    /// host starts and closes it when the host stops), on the application's <see cref="ZlinkContext"/>,
    /// with settings bound from <paramref name="configuration"/> (a section: <c>Type</c>, <c>Bind</c>,
    /// <c>Connect</c>, the socket options, <c>Subscribe</c>, <c>Tls</c>, <c>Health</c>) and then
    /// <paramref name="configure"/>, checked when the host starts.
    /// </summary>
    public static IServiceCollection AddNetZlinkSocket(this IServiceCollection services, string key, IConfiguration configuration, Action<NetZlinkSocketOptions>? configure = null)
        => AddSocket(services, RequireKey(key), configuration ?? throw new ArgumentNullException(nameof(configuration)), configure);

    /// <summary>Registers a socket under <paramref name="key"/>, configured in code.</summary>
    public static IServiceCollection AddNetZlinkSocket(this IServiceCollection services, string key, Action<NetZlinkSocketOptions> configure)
        => AddSocket(services, RequireKey(key), null, configure ?? throw new ArgumentNullException(nameof(configure)));

    private static IServiceCollection AddReceiver(IServiceCollection services, string? key, IConfiguration? configuration, Action<NetZlinkReceiverOptions>? configure)
    {
        // The receiver's settings sit in the section itself, beside BindEndpoint and Services.
        string keyPrefix = AddHosted(services, "receiver", key, configuration, o => o.Receiver, configure, (sp, k) => new NetZlinkReceiverService(sp, k, k ?? Options.Options.DefaultName), s => new NetZlinkReceiverHealthCheck(s));
        string optionsName = key ?? Options.Options.DefaultName;
        services.AddSingleton<IValidateOptions<NetZlinkReceiverOptions>>(new SettingsValidator<NetZlinkReceiverOptions>(optionsName, keyPrefix, NetZlinkReceiverOptionsValidator.Problems));
        CheckKeys<NetZlinkReceiverOptions>(services, optionsName, keyPrefix, configuration, new SectionShape("receiver", [typeof(NetZlinkReceiverOptions), typeof(ReceiverOptions)], nameof(NetZlinkReceiverOptions.Receiver), "a receiver setting"));
        if (key is null)
        {
            services.AddSingleton(sp => sp.GetRequiredService<NetZlinkReceiverService>().Receiver);
        }
        else
        {
            services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkReceiverService>(k).Receiver);
        }

        return services;
    }

    private static IServiceCollection AddSocket(IServiceCollection services, string key, IConfiguration? configuration, Action<NetZlinkSocketOptions>? configure)
    {
        string keyPrefix = AddHosted<NetZlinkSocketOptions, NetZlinkSocketService>(services, "socket", key, configuration, null, configure, (sp, k) => new NetZlinkSocketService(sp, k!), s => new NetZlinkSocketHealthCheck(s));
        services.AddSingleton<IValidateOptions<NetZlinkSocketOptions>>(new SettingsValidator<NetZlinkSocketOptions>(key, keyPrefix, NetZlinkSocketOptionsValidator.Problems));
        CheckKeys<NetZlinkSocketOptions>(services, key, keyPrefix, configuration, new SectionShape("socket", [typeof(NetZlinkSocketOptions)]));
        services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkSocketService>(k).Socket);
        return services;
    }

    /// <summary>
    /// Registers one hosted <typeparamref name="TService"/> of a kind under <paramref name="key"/> (or
    /// without one): its options (named by the key, bound and configured, validated at start), the shared
    /// context, the service itself as a singleton and as an <see cref="IHostedService"/>, and what
    /// <see cref="AddNetZlinkHealthChecks"/> needs to add its check. Returns the prefix that names the
    /// section's keys in failure lines.
    /// </summary>
    private static string AddHosted<TOptions, TService>(
        IServiceCollection services, string kind, string? key, IConfiguration? configuration, Func<TOptions, object>? flat, Action<TOptions>? configure,
        Func<IServiceProvider, string?, TService> make, Func<TService, IHealthCheck> check)
        where TOptions : class
        where TService : class, IHostedService
    {
        ArgumentNullException.ThrowIfNull(services);
        if (services.Any(d => d.ImplementationInstance is HostedRegistration r && r.Kind == kind && r.Key == key))
        {
            throw new InvalidOperationException(key is null
                ? $"A NetZlink {kind} without a key is registered already: give further {kind}s a key (AddKeyedNetZlink{char.ToUpperInvariant(kind[0])}{kind[1..]})."
                : $"A NetZlink {kind} with the key '{key}' is registered already.");
        }

        services.AddSingleton(new HostedRegistration(kind, key, sp => check(key is null ? sp.GetRequiredService<TService>() : sp.GetRequiredKeyedService<TService>(key))));
        services.AddNetZlinkContext();
        string keyPrefix = BindOptions(services, key ?? Options.Options.DefaultName, configuration, flat, configure);
        if (key is null)
        {
            services.AddSingleton(sp => make(sp, null));
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<TService>());
        }
        else
        {
            services.AddKeyedSingleton(key, (sp, _) => make(sp, key));
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredKeyedService<TService>(key));
        }

        return keyPrefix;
    }

    /// <summary>Adds a health check per gateway, receiver and socket registered so far (<c>netzlink-{kind}</c>, <c>netzlink-{kind}:{key}</c>); returns how many.</summary>
    private static int AddHostedHealthChecks(IHealthChecksBuilder builder, string[] tags)
    {
        HostedRegistration[] hosted = [.. builder.Services
            .Where(d => d.ServiceType == typeof(HostedRegistration) && d.ImplementationInstance is HostedRegistration)
            .Select(d => (HostedRegistration)d.ImplementationInstance!)];
        foreach (HostedRegistration registration in hosted)
        {
            string name = registration.Key is null ? $"netzlink-{registration.Kind}" : $"netzlink-{registration.Kind}:{registration.Key}";
            builder.Add(new HealthCheckRegistration(name, registration.Check, failureStatus: null, tags));
        }

        return hosted.Length;
    }
}

/// <summary>One registered gateway, receiver or socket: its kind, its key and how its health check is made.</summary>
internal sealed record HostedRegistration(string Kind, string? Key, Func<IServiceProvider, IHealthCheck> Check);
