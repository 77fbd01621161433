// Registration of hosted gateways: a NetZlinkGatewayService (also its IHostedService) with its
// ZlinkGateway and ZlinkDiscovery, without a key or under a string key, on the one ZlinkContext of
// AddNetZlinkContext, with options named by the key, bound from a configuration section and/or
// configured in code, and checked at start.
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using NetZlink.Extensions.Hosting;
using NetZlink.Services;

namespace Microsoft.Extensions.DependencyInjection;

public static partial class NetZlinkServiceCollectionExtensions
{
    /// <summary>
    /// Registers a <see cref="ZlinkGateway"/>, the <see cref="ZlinkDiscovery"/> under it and their
    /// <see cref="NetZlinkGatewayService"/> (the hosted service that connects the discovery to the
    /// registries when the host starts and disposes both when it stops), on the application's
    /// <see cref="NetZlink.ZlinkContext"/> (<see cref="AddNetZlinkContext"/>), with settings bound from
    /// <paramref name="configuration"/> (a section: <c>RegistryEndpoint</c>, <c>RegistryEndpoints</c>,
    /// <c>RegistryTimeout</c>, <c>Services</c>, <c>LoadBalancing</c>, any <see cref="GatewayOptions"/>
    /// setting, <c>Health</c>) and then <paramref name="configure"/>, checked when the host starts.
    /// </summary>
    public static IServiceCollection AddNetZlinkGateway(this IServiceCollection services, IConfiguration configuration, Action<NetZlinkGatewayOptions>? configure = null)
        => AddGateway(services, null, configuration ?? throw new ArgumentNullException(nameof(configuration)), configure);

    /// <summary>Registers a gateway configured in code (see the overload with a configuration section).</summary>
    public static IServiceCollection AddNetZlinkGateway(this IServiceCollection services, Action<NetZlinkGatewayOptions> configure)
        => AddGateway(services, null, null, configure ?? throw new ArgumentNullException(nameof(configure)));

    /// <summary>
    /// Registers a gateway under <paramref name="key"/> (<c>[FromKeyedServices(key)] ZlinkGateway</c>,
    /// <c>ZlinkDiscovery</c>, <c>NetZlinkGatewayService</c>); several keys make several gateways,
    /// each with its own discovery and options (named <paramref name="key"/>).
    /// </summary>
    public static IServiceCollection AddKeyedNetZlinkGateway(this IServiceCollection services, string key, IConfiguration configuration, Action<NetZlinkGatewayOptions>? configure = null)
        => AddGateway(services, RequireKey(key), configuration ?? throw new ArgumentNullException(nameof(configuration)), configure);

    /// <summary>Registers a gateway under <paramref name="key"/>, configured in code.</summary>
    public static IServiceCollection AddKeyedNetZlinkGateway(this IServiceCollection services, string key, Action<NetZlinkGatewayOptions> configure)
        => AddGateway(services, RequireKey(key), null, configure ?? throw new ArgumentNullException(nameof(configure)));

    private static IServiceCollection AddGateway(IServiceCollection services, string? key, IConfiguration? configuration, Action<NetZlinkGatewayOptions>? configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        if (services.Any(d => d.ImplementationInstance is GatewayRegistration r && r.Key == key))
        {
            throw new InvalidOperationException(key is null
                ? "A NetZlink gateway without a key is registered already: give further gateways a key (AddKeyedNetZlinkGateway)."
                : $"A NetZlink gateway with the key '{key}' is registered already.");
        }

        string optionsName = key ?? Options.Options.DefaultName;
        services.AddSingleton(new GatewayRegistration(key, optionsName));
        services.AddNetZlinkContext();

        // The gateway's settings sit in the section itself, beside RegistryEndpoint and Services.
        string keyPrefix = BindOptions<NetZlinkGatewayOptions>(services, optionsName, configuration, o => o.Gateway, configure);
        services.AddSingleton<IValidateOptions<NetZlinkGatewayOptions>>(new NetZlinkGatewayOptionsValidator(optionsName, keyPrefix, configuration));

        NetZlinkGatewayService Make(IServiceProvider sp) => new(sp, key, optionsName);
        if (key is null)
        {
            services.AddSingleton(Make);
            services.AddSingleton(sp => sp.GetRequiredService<NetZlinkGatewayService>().Gateway);
            services.AddSingleton(sp => sp.GetRequiredService<NetZlinkGatewayService>().Discovery);
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<NetZlinkGatewayService>());
        }
        else
        {
            services.AddKeyedSingleton(key, (sp, _) => Make(sp));
            services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkGatewayService>(k).Gateway);
            services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkGatewayService>(k).Discovery);
            services.AddSingleton<IHostedService>(sp => sp.GetRequiredKeyedService<NetZlinkGatewayService>(key));
        }

        return services;
    }

    /// <summary>Adds a health check per gateway registered so far; returns how many.</summary>
    private static int AddGatewayHealthChecks(IHealthChecksBuilder builder, string[] tags)
    {
        GatewayRegistration[] gateways = [.. builder.Services
            .Where(d => d.ServiceType == typeof(GatewayRegistration) && d.ImplementationInstance is GatewayRegistration)
            .Select(d => (GatewayRegistration)d.ImplementationInstance!)];
        foreach (GatewayRegistration gateway in gateways)
        {
            string name = gateway.Key is null ? "netzlink-gateway" : "netzlink-gateway:" + gateway.Key;
            builder.Add(new HealthCheckRegistration(
                name,
                sp => new NetZlinkGatewayHealthCheck(gateway.Key is null ? sp.GetRequiredService<NetZlinkGatewayService>() : sp.GetRequiredKeyedService<NetZlinkGatewayService>(gateway.Key)),
                failureStatus: null,
                tags));
        }

        return gateways.Length;
    }
}

/// <summary>One registered gateway: its key and options name.</summary>
internal sealed record GatewayRegistration(string? Key, string OptionsName);
