// Registration of hosted gateways: a NetZlinkGatewayService (also its IHostedService) with its
// ZlinkGateway and ZlinkDiscovery, without a key or under a string key, on the one ZlinkContext of
// AddNetZlinkContext, with options named by the key, bound from a configuration section and/or
// configured in code, and checked at start.
using Microsoft.Extensions.Configuration;
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
        // The gateway's settings sit in the section itself, beside RegistryEndpoint and Services.
        string keyPrefix = AddHosted(services, "gateway", key, configuration, o => o.Gateway, configure, (sp, k) => new NetZlinkGatewayService(sp, k, k ?? Options.Options.DefaultName), s => new NetZlinkGatewayHealthCheck(s));
        string optionsName = key ?? Options.Options.DefaultName;
        services.AddSingleton<IValidateOptions<NetZlinkGatewayOptions>>(new SettingsValidator<NetZlinkGatewayOptions>(optionsName, keyPrefix, NetZlinkGatewayOptionsValidator.Problems));
        CheckKeys<NetZlinkGatewayOptions>(services, optionsName, keyPrefix, configuration, new SectionShape("gateway", [typeof(NetZlinkGatewayOptions), typeof(GatewayOptions)], nameof(NetZlinkGatewayOptions.Gateway), "a gateway setting"));
        if (key is null)
        {
            services.AddSingleton(sp => sp.GetRequiredService<NetZlinkGatewayService>().Gateway);
            services.AddSingleton(sp => sp.GetRequiredService<NetZlinkGatewayService>().Discovery);
        }
        else
        {
            services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkGatewayService>(k).Gateway);
            services.AddKeyedSingleton(key, (sp, k) => sp.GetRequiredKeyedService<NetZlinkGatewayService>(k).Discovery);
        }

        return services;
    }
}
