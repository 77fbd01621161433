// The gateway sample: a Generic Host worker service. Settings come from appsettings.json, the
// environment (Gateway__FrontendEndpoint=...) or the command line (--Gateway:FrontendEndpoint=...).
// Ctrl+C or SIGTERM stops it: the host cancels the service, which stops taking requests, answers
// or fails the ones in flight, stops its client engine and closes its sockets.
using NetZlink.Samples.Gateway;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Logging.AddSimpleConsole(o =>
{
    o.SingleLine = true;
    o.TimestampFormat = "HH:mm:ss.fff ";
});
builder.Services.AddOptions<GatewayOptions>()
    .Bind(builder.Configuration.GetSection(GatewayOptions.Section))
    .Validate(o => o.Validate() is null, "invalid Gateway settings (see the log line before this one)")
    .ValidateOnStart();
builder.Services.AddHostedService<GatewayService>();
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

using IHost host = builder.Build();
await host.RunAsync();
