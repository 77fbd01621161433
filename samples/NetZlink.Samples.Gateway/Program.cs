// The gateway sample: a Generic Host worker service. Settings come from appsettings.json, the
// environment (Gateway__FrontendEndpoint=...) or the command line (--Gateway:FrontendEndpoint=...).
// Ctrl+C or SIGTERM stops it: the host cancels the service, which stops taking requests, answers
// or fails the ones in flight, stops its client engine and closes its sockets.
using Microsoft.Extensions.Options;
using NetZlink.Samples.Gateway;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Logging.AddSimpleConsole(o =>
{
    o.SingleLine = true;
    o.TimestampFormat = "HH:mm:ss.fff ";
});
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
builder.Services.AddHostedService<GatewayService>();
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

using IHost host = builder.Build();
await host.RunAsync();

// 0 after a clean stop; the service sets 2 when it could not start (an endpoint it cannot bind or
// resolve) and 3 when the backend could not be reached.
return Environment.ExitCode;
