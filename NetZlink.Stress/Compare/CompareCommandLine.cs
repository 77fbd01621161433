// Reads `NetZlink.Stress compare [--out DIR] [--stacks …] [--scenarios …] [--transports …] [scenario flags]`.
// compare's own flags are read here; every other flag is a scenario flag and goes through the
// ordinary parser, so its checks and messages are exactly those of a single run.
using System.Globalization;
using NetZlink.Stress.Cli;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Compare;

/// <summary>Turns the words after `compare` into a <see cref="VerbParseOutcome{CompareOptions}"/>.</summary>
internal static class CompareCommandLine
{
    /// <summary>The scenarios compare can run: one run per stack each.</summary>
    public static readonly IReadOnlyList<string> Scenarios = ["s0", "s1", "s2"];

    /// <summary>The open-model s2 runs (--rate), reported beside the closed-loop ones.</summary>
    public const string OpenScenario = CompareTransports.OpenScenario;

    // compare sets these per run itself; giving them would make the runs differ or overwrite each other.
    private static readonly Dictionary<string, string> SetPerRun = new(StringComparer.Ordinal)
    {
        ["--scenario"] = "use --scenarios",
        ["--stack"] = "use --stacks",
        ["--client-stack"] = "use --stacks",
        ["--server-stack"] = "use --stacks",
        ["--role"] = "compare starts each server and client itself",
        ["--port"] = "each server takes a free port",
        ["--host"] = "the servers run on this machine",
        ["--bind-host"] = "the servers run on this machine",
        ["--transport"] = "use --transports",
        ["--metrics-csv"] = "each run writes DIR/<stack>/<scenario>/metrics.csv",
        ["--summary-json"] = "each run writes DIR/<stack>/<scenario>/summary.json",
        ["--timeseries-csv"] = "each run writes DIR/<stack>/<scenario>/timeseries.csv",
        ["--scenario-id"] = "each run's id is <stack>-<scenario>",
        ["--start-at"] = "compare starts each run as soon as the one before has finished",
        ["--json-histogram"] = "each run's summary.json is one host's whole run; merge is for several client hosts of one run",
    };

    /// <summary>The help text of `compare --help`.</summary>
    public static string HelpText => string.Join('\n',
        "usage: NetZlink.Stress compare [--out DIR] [--stacks netzlink,dotnet,c-epoll,c-uring] [--scenarios s0,s1,s2] [--transports tcp,tls,ws,wss] [scenario flags]",
        "Runs every scenario on every stack with the same flags, each run a separate server and client process,",
        "then writes DIR/<stack>/<scenario>/{metrics.csv,summary.json,summary.hgrm,timeseries.csv,stdout.txt}, DIR/report.md and DIR/report.html.",
        "  --out DIR         where to write (default compare-results/<UTC time>)",
        "  --stacks LIST     netzlink, dotnet (NetZlink.Stress), c-epoll and c-uring (native/build/bench/limit_echo",
        "                    --io epoll|uring); default all, c-uring skipped with the reason where io_uring is refused",
        "  --scenarios LIST  s0, s1, s2; default all",
        "  --transports LIST tcp, tls, ws, wss; default tcp. Runs over tls are labelled tls-<scenario> (ids <stack>-tls-s2;",
        "                    ws-s2, wss-s2 likewise), tls and wss with a CA and server certificate made per run; c-epoll",
        "                    and c-uring run tcp only; a netzlink run over a transport the native library lacks is a SKIP",
        "  --rate N          also an open-model s2 run (s2-open) per stack at N packets/s; the other runs stay closed-loop",
        "  --quiet           no per-second progress from the runs",
        "scenario flags: those of a single run (--ccu --size --inflight --warmup --measure --drain-timeout --connect-* ...; see --help);",
        "--hwm, --io-threads and --shards reach the .NET stacks only.",
        "exit codes: 0 every run PASS, 1 bad usage, 2 a run FAIL or did not finish");

    /// <summary>Parses <paramref name="args"/> (the words after `compare`).</summary>
    public static VerbParseOutcome<CompareOptions> Parse(IReadOnlyList<string> args, DateTime utcNow)
    {
        string? outDirectory = null;
        IReadOnlyList<string> stacks = CompareStacks.All;
        IReadOnlyList<string> scenarios = Scenarios;
        IReadOnlyList<string> transports = [CompareTransports.Tcp];
        bool quiet = false;
        var errors = new List<string>();
        var scenarioArgs = new List<string> { "--role", "client" };

        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            string name = arg.Split('=', 2)[0];
            if (arg is "--help" or "-h")
            {
                return VerbParseOutcome<CompareOptions>.Help(HelpText);
            }

            if (name is "--out" or "--stacks" or "--scenarios" or "--transports")
            {
                string? value = arg.Contains('=', StringComparison.Ordinal) ? arg[(name.Length + 1)..]
                    : i + 1 < args.Count && !args[i + 1].StartsWith("--", StringComparison.Ordinal) ? args[++i] : null;
                if (string.IsNullOrWhiteSpace(value))
                {
                    errors.Add($"{name} needs a value");
                }
                else if (name == "--out")
                {
                    outDirectory = value;
                }
                else if (name == "--stacks")
                {
                    stacks = List(errors, name, value, CompareStacks.All);
                }
                else if (name == "--transports")
                {
                    transports = List(errors, name, value, CompareTransports.All);
                }
                else
                {
                    scenarios = List(errors, name, value, Scenarios);
                }
            }
            else if (name == "--quiet")
            {
                quiet = true;
            }
            else if (SetPerRun.TryGetValue(name, out string? why))
            {
                errors.Add($"{name} cannot be given to compare: {why}");
            }
            else
            {
                scenarioArgs.Add(arg);
            }
        }

        ParseOutcome single = CommandLineParsing.Parse(scenarioArgs);
        errors.AddRange(single.Errors);
        if (errors.Count > 0 || single.Invocation is not { } invocation)
        {
            return VerbParseOutcome<CompareOptions>.Usage(errors.Count > 0 ? errors : ["compare takes no --version (see compare --help)"]);
        }

        outDirectory ??= Path.Combine("compare-results", utcNow.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
        if (invocation.Settings.Rate > 0)
        {
            scenarios = [.. scenarios, OpenScenario];
        }

        scenarios = transports.SelectMany(t => scenarios.Select(s => CompareTransports.Label(t, s))).ToArray();

        return VerbParseOutcome<CompareOptions>.Run(new CompareOptions(outDirectory, stacks, scenarios, invocation.Settings, quiet));
    }

    private static IReadOnlyList<string> List(List<string> errors, string flag, string value, IReadOnlyList<string> allowed)
    {
        string[] items = value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(s => s.ToLowerInvariant()).Distinct().ToArray();
        string[] unknown = items.Where(s => !allowed.Contains(s)).ToArray();
        if (items.Length == 0 || unknown.Length > 0)
        {
            errors.Add($"{flag} takes a comma-separated list of {string.Join(", ", allowed)} (got '{value}')");
            return allowed;
        }

        // Report order is the canonical order, whatever order they were given in.
        return allowed.Where(items.Contains).ToArray();
    }
}
