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
builder.Services.AddOptions<GatewayOptions>()
    .Bind(builder.Configuration.GetSection(GatewayOptions.Section))
    .ValidateOnStart();
builder.Services.AddSingleton<IValidateOptions<GatewayOptions>, GatewayOptionsValidator>();
builder.Services.AddHostedService<GatewayService>();
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

using IHost host = builder.Build();
try
{
    await host.RunAsync();
}
catch (OptionsValidationException e)
{
    // Bad settings: one line saying which, and exit code 2, rather than a stack trace.
    await Console.Error.WriteLineAsync($"gateway: {string.Join("; ", e.Failures)}");
    return 2;
}

return 0;
