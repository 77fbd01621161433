// Entry point: "overhead" runs the Stopwatch loop that benchmarks/run.sh sets beside the C loop;
// anything else goes to BenchmarkSwitcher (--filter, --job, ...), with --quick as a short job.
using BenchmarkDotNet.Running;
using NetZlink.Benchmarks;

if (args.Length > 0 && args[0] == OverheadLoop.Command)
{
    return OverheadLoop.Run(args[1..], Console.Out);
}

BenchmarkSwitcher.FromAssembly(typeof(OverheadLoop).Assembly).Run(QuickSwitch.Expand(args), SuiteConfig.Create());
return 0;
