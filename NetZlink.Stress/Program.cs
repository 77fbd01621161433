// NetZlink.Stress: the seeds' STREAM echo benchmark. The work is in Hosting/StressApp (wiring),
// Cli/ (flags and plans), Output/ (formats) and Scenarios/ (the scenario logic).
using NetZlink.Stress.Hosting;

using var signals = new ShutdownSignals(Console.Error);
var app = new StressApp(Console.Out, Console.Error, watchStdin: true);
return await app.RunAsync(args, signals.Token).ConfigureAwait(false);
