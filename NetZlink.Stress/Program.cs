// NetZlink.Stress: the STREAM echo benchmark (docs/scenarios.md). The work is in Hosting/StressApp (wiring),
// Cli/ (flags and plans), Output/ (formats) and Scenarios/ (the scenario logic); the `compare`
// verb is Compare/CompareCommand, the `merge` verb Merge/MergeCommand, the `counts` verb (limit_echo's
// COUNTS line judged) Compare/CountsCommand.
using NetZlink.Stress.Compare;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Merge;

using var signals = new ShutdownSignals(Console.Error);
if (args.Length > 0 && args[0] == CompareCommand.Verb)
{
    return await CompareCommand.RunAsync(args[1..], Console.Out, Console.Error, signals.Token).ConfigureAwait(false);
}

if (args.Length > 0 && args[0] == MergeCommand.Verb)
{
    return MergeCommand.Run(args[1..], Console.Out, Console.Error);
}

if (args.Length > 0 && args[0] == CountsCommand.Verb)
{
    return CountsCommand.Run(args[1..], Console.In, Console.Out, Console.Error);
}

var app = new StressApp(Console.Out, Console.Error, watchStdin: true);
return await app.RunAsync(args, signals.Token).ConfigureAwait(false);
