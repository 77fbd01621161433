// The gateway sample: a Generic Host worker service. Settings come from appsettings.json, the
// environment (Gateway__FrontendEndpoint=...) or the command line (--Gateway:FrontendEndpoint=...).
// The registry it finds its backends through is the hosting package's section, NetZlink:Gateway
// (--NetZlink:Gateway:RegistryEndpoint=...). Ctrl+C or SIGTERM stops it: the host cancels the
// service, which stops taking requests, answers or fails the ones in flight and closes its sockets.
// "registry" and "backend" as the first argument run the other two parts of a demo instead
// (Backends.cs): a registry, and an echo backend that registers with it.
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;
using NetZlink;
using NetZlink.Samples.Gateway;

if (args.Length > 0 && args[0] is "registry" or "backend")
{
    return await Backends.RunAsync(args[0], args[1..]);
}

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Logging.AddSimpleConsole(o =>
{
    o.SingleLine = true;
    o.TimestampFormat = "HH:mm:ss.fff ";
});
// A start that fails is reported below in one line; the host's own report of it carries a stack trace.
builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.Critical);
// Settings are read and checked before the host starts: a bad one stops the gateway here with one
// line naming it and exit code 2 (the host would log a stack trace).
if (GatewayOptions.ReadProblem(builder.Configuration) is { } problem)
{
    await Console.Error.WriteLineAsync($"gateway: {problem}");
    return 2;
}

builder.Services.AddOptions<GatewayOptions>()
    .Bind(builder.Configuration.GetSection(GatewayOptions.Section))
    .ValidateOnStart();
builder.Services.AddSingleton<IValidateOptions<GatewayOptions>, GatewayOptionsValidator>();

// The backends' side, from the hosting package: a ZlinkDiscovery following the registry of
// NetZlink:Gateway:RegistryEndpoint and a ZlinkGateway over it, on one shared ZlinkContext,
// checked at start (one line per bad key), connected when the host starts and disposed when it
// stops. Registered before GatewayService, so it starts before it and stops after it (hosted
// services stop in reverse order): the requests in flight are answered before the gateway closes.
string service = builder.Configuration[$"{GatewayOptions.Section}:{nameof(GatewayOptions.Service)}"] ?? new GatewayOptions().Service;
builder.Services.AddNetZlinkGateway(builder.Configuration.GetSection("NetZlink:Gateway"), o =>
{
    if (!o.Services.Contains(service))
    {
        o.Services.Add(service); // the health check wants a receiver of it
    }
});
builder.Services.AddHealthChecks().AddNetZlinkHealthChecks();
builder.Services.AddSingleton<IHealthCheckPublisher, HealthLog>(); // logs each change of status
// ... in one line; the health check service itself would log every failing check, every period.
builder.Logging.AddFilter("Microsoft.Extensions.Diagnostics.HealthChecks.DefaultHealthCheckService", LogLevel.Critical);
builder.Services.Configure<HealthCheckPublisherOptions>(o =>
{
    o.Delay = TimeSpan.FromSeconds(1);
    o.Period = TimeSpan.FromSeconds(5);
});

builder.Services.AddHostedService<GatewayService>();
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

using IHost host = builder.Build();
try
{
    await host.StartAsync();
}
catch (Exception e) when (e is ArgumentException or ZlinkException or OptionsValidationException)
{
    // Settings that do not hold: one line, exit 2.
    await Console.Error.WriteLineAsync($"gateway cannot start: {e.Message}");
    return 2;
}

await host.WaitForShutdownAsync();

// 0 after a clean stop; 2 when it could not start (an endpoint it cannot bind or connect to).
return Environment.ExitCode;
