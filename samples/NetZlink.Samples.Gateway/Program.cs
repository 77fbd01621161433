// The gateway sample: a Generic Host worker service. Settings come from appsettings.json, the
// environment (Gateway__FrontendEndpoint=...) or the command line (--Gateway:FrontendEndpoint=...).
// Ctrl+C or SIGTERM stops it: the host cancels the service, which stops taking requests, answers
// or fails the ones in flight and closes its socket; then the host stops the client engine.
using Microsoft.Extensions.Options;
using NetZlink;
using NetZlink.Engine;
using NetZlink.Extensions.Hosting;
using NetZlink.Samples.Gateway;

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

// The backend connection: a ClientEngine the host starts before the service and stops after it,
// logging through the host's logger. Its endpoint is Gateway:BackendEndpoint; any other engine
// setting can be given under Gateway:Backend (Gateway:Backend:ConnectTimeout=00:00:02), checked
// at start like the gateway's own.
builder.Services.AddOptions<NetZlinkClientEngineOptions>()
    .Configure<IOptions<GatewayOptions>>((backend, gateway) =>
    {
        backend.Engine.Endpoints = [gateway.Value.BackendEndpoint];
        backend.Engine.ConnectRetries = 10;
        backend.Engine.Name = "backend";
    });
builder.Services.AddNetZlinkClientEngine(builder.Configuration.GetSection("Gateway:Backend"))
    .UseHandler((services, _) => services.GetRequiredService<BackendLink>().CreateHandler());
builder.Services.AddSingleton<BackendLink>();
// Its health (Healthy, Degraded, Unhealthy: docs/hosting.md), for a probe or an HTTP endpoint.
builder.Services.AddHealthChecks().AddNetZlinkHealthChecks();
builder.Services.AddHostedService<GatewayService>();
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

using IHost host = builder.Build();
try
{
    await host.StartAsync();
}
catch (Exception e) when (e is ArgumentException or ZlinkException or OptionsValidationException)
{
    // A backend host name that does not resolve, or engine settings that do not hold: one line, exit 2.
    await Console.Error.WriteLineAsync($"gateway cannot start: {e.Message}");
    return 2;
}

await host.WaitForShutdownAsync();

// 0 after a clean stop; 2 when it could not start (an endpoint it cannot bind or resolve) and 3
// when the backend could not be reached.
return Environment.ExitCode;
