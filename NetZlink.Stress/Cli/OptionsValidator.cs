// Range checks on the parsed flags, each failure one line naming its flag.
using System.Globalization;
using NetZlink.Stress.Faults;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Cli;

/// <summary>Checks <see cref="StressOptions"/> values that CommandLineParser accepted as well-typed.</summary>
internal static class OptionsValidator
{
    /// <summary>The --scenario values.</summary>
    public static readonly IReadOnlyList<string> Scenarios = ["s0", "s1", "s2", "s3", "s4"];

    /// <summary>The --role values.</summary>
    public static readonly IReadOnlyList<string> Roles = ["both", "server", "client"];

    /// <summary>A --start-at further in the past than this (seconds) is a mistake, not a late host.</summary>
    public const double StartAtMostPastSeconds = 600;

    /// <summary>A --start-at further ahead than this (seconds) is a mistake (milliseconds, a typo).</summary>
    public const double StartAtMostAheadSeconds = 86400;

    /// <summary>The flags s0 replaces or never reads: it sends one packet on one connection, with no warm-up or measured phase.</summary>
    public static readonly IReadOnlyList<string> IgnoredByS0 = ["--ccu", "--inflight", "--warmup", "--measure", "--latency-sample-rate"];

    /// <summary>Returns every problem found, empty when the options can run.</summary>
    /// <param name="o">The parsed flags.</param>
    /// <param name="given">The flags the command line named ("--ccu"); the others have their defaults.</param>
    /// <param name="environment">Reads an environment variable (JOB_COMPLETION_INDEX for --shard-index); null: the process's own.</param>
    public static IReadOnlyList<string> Validate(StressOptions o, IReadOnlySet<string>? given = null, Func<string, string?>? environment = null)
    {
        given ??= new HashSet<string>(StringComparer.Ordinal);
        var errors = new List<string>();

        OneOf(errors, "--scenario", o.Scenario, Scenarios);
        OneOf(errors, "--role", o.Role, Roles);
        OneOf(errors, "--transport", o.Transport, TransportCatalog.Known);
        OneOf(errors, "--stack", o.Stack, StackNames.All);
        if (o.ClientStack is not null)
        {
            OneOf(errors, "--client-stack", o.ClientStack, StackNames.All);
        }

        if (o.ServerStack is not null)
        {
            OneOf(errors, "--server-stack", o.ServerStack, StackNames.All);
        }

        NotBlank(errors, "--bind-host", o.BindHost);
        NotBlank(errors, "--host", o.Host);

        bool serverOnly = string.Equals(o.Role, "server", StringComparison.OrdinalIgnoreCase);
        if (serverOnly)
        {
            InRange(errors, FlagRanges.ServerPort, o.Port);
        }
        else if (!FlagRanges.Port.Contains(o.Port))
        {
            errors.Add(FlagRanges.Port.Error(o.Port) + (o.Port == 0 ? "; 0, any free port, is for --role server only" : string.Empty));
        }

        InRange(errors, FlagRanges.Ccu, o.Ccu);
        InRange(errors, FlagRanges.Size, o.Size);
        InRange(errors, FlagRanges.Inflight, o.Inflight);
        InRange(errors, FlagRanges.Warmup, o.Warmup);
        InRange(errors, FlagRanges.Measure, o.Measure);
        InRange(errors, FlagRanges.DrainTimeout, o.DrainTimeout);
        InRange(errors, FlagRanges.ConnectConcurrency, o.ConnectConcurrency);
        InRange(errors, FlagRanges.ConnectTimeout, o.ConnectTimeout);
        InRange(errors, FlagRanges.ConnectRetries, o.ConnectRetries);
        InRange(errors, FlagRanges.ConnectRetryDelayMs, o.ConnectRetryDelayMs);
        InRange(errors, FlagRanges.Backlog, o.Backlog);
        InRange(errors, FlagRanges.Hwm, o.Hwm);
        InRange(errors, FlagRanges.SendBuffer, o.SendBuffer);
        InRange(errors, FlagRanges.ReceiveBuffer, o.ReceiveBuffer);
        InRange(errors, FlagRanges.IoThreads, o.IoThreads);
        InRange(errors, FlagRanges.Shards, o.Shards);
        InRange(errors, FlagRanges.SendBatch, o.SendBatch);
        InRange(errors, FlagRanges.LatencySampleRate, o.LatencySampleRate);
        Rate(errors, o.Rate, o.Scenario);
        OneOf(errors, "--fault", o.Fault, FaultModeNames.All);
        if (string.Equals(o.Role, "client", StringComparison.OrdinalIgnoreCase) && !string.Equals(o.Fault, "none", StringComparison.OrdinalIgnoreCase))
        {
            errors.Add($"--fault {o.Fault} makes the built-in server misbehave, and --role client runs none (use --role both or server)");
        }

        if (!string.Equals(o.Fault, "none", StringComparison.OrdinalIgnoreCase) && !string.Equals(o.Transport, "tcp", StringComparison.OrdinalIgnoreCase)
            && !string.Equals(o.Scenario, "s4", StringComparison.OrdinalIgnoreCase))
        {
            errors.Add($"--fault {o.Fault} runs the fault server, which speaks tcp only: not --transport {o.Transport}");
        }

        InRange(errors, FlagRanges.FaultEvery, o.FaultEvery);
        InRange(errors, FlagRanges.FaultAfter, o.FaultAfter);

        if (o.ScenarioId is not null && (o.ScenarioId.Length == 0 || o.ScenarioId.Any(char.IsControl)))
        {
            errors.Add("--scenario-id must be non-empty and printable");
        }

        NotBlankPath(errors, "--metrics-csv", o.MetricsCsv);
        NotBlankPath(errors, "--summary-json", o.SummaryJson);
        NotBlankPath(errors, "--timeseries-csv", o.TimeseriesCsv);
        TlsFlagRules.Check(errors, o);
        StartAt(errors, o, UnixTime.Now);
        if (o.JsonHistogram && o.SummaryJson is null)
        {
            errors.Add("--json-histogram adds the latency histogram to the --summary-json file: give --summary-json PATH too");
        }

        if (o.ExitOnStdinEof && string.Equals(o.Role, "both", StringComparison.OrdinalIgnoreCase))
        {
            errors.Add("--exit-on-stdin-eof is for --role server or client (a child stopped when its parent closes its stdin or dies); --role both stops its own children");
        }

        Scale(errors, o, given, environment ?? Environment.GetEnvironmentVariable);
        if (!serverOnly)
        {
            ClientRules(errors, o, given);
        }

        foreach (string word in o.Extra)
        {
            errors.Add($"unexpected argument '{word}' (every setting is a --flag; see --help)");
        }

        return errors;
    }

    /// <summary>What only a client run (--role both or client) uses: s0's fixed shape and the buffers sized by several flags.</summary>
    private static void ClientRules(List<string> errors, StressOptions o, IReadOnlySet<string> given)
    {
        string scenario = o.Scenario.ToLowerInvariant();
        if (scenario == "s0" && IgnoredByS0.Where(given.Contains).ToArray() is { Length: > 0 } ignored)
        {
            errors.Add($"{string.Join(", ", ignored)}: s0 sends one packet on one connection and checks its echo byte by byte, "
                + "with no warm-up or measured phase, so it has no use for them (--drain-timeout bounds its wait; use s2 for a load)");
        }

        if (errors.Count > 0)
        {
            // The products below are only meaningful once each factor is in its range.
            return;
        }

        long packet = o.Size + (long)NetZlink.Engine.LengthPrefixFramer.Size;
        if (o.SendBatch * packet > FlagRanges.MaxBuffer)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture,
                $"--send-batch {o.SendBatch} x {packet}-byte packets (--size {o.Size} + the 4-byte header) is {o.SendBatch * packet} bytes of send buffer per client thread, more than the {FlagRanges.MaxBuffer} an array holds: lower --send-batch or --size"));
        }

        bool dotnetClient = string.Equals(o.ClientStack ?? o.Stack, StackNames.Dotnet, StringComparison.OrdinalIgnoreCase);
        int ccu = scenario == "s0" ? 1 : o.Ccu;
        if (dotnetClient)
        {
            // DotnetClient's split: one shard per core unless --shards, never more shards than connections,
            // and each shard keeps one packet of receive tail per connection in one array.
            int shards = Math.Clamp(o.Shards > 0 ? o.Shards : Environment.ProcessorCount, 1, ccu);
            long perShard = (ccu + shards - 1) / shards;
            if (perShard * packet > FlagRanges.MaxBuffer)
            {
                errors.Add(string.Create(CultureInfo.InvariantCulture,
                    $"the dotnet client keeps a {packet}-byte packet (--size {o.Size} + the 4-byte header) per connection, and --ccu {ccu} over {shards} shards puts {perShard} connections on one shard: {perShard * packet} bytes, more than the {FlagRanges.MaxBuffer} an array holds: lower --ccu or --size, or raise --shards"));
            }
        }
    }

    /// <summary>
    /// --processes, --server-processes, --servers, --shard-count and --shard-index: which roles and
    /// scenarios they go with. Sets <see cref="StressOptions.ShardIndex"/> from the environment when
    /// --shard-count is given without it.
    /// </summary>
    private static void Scale(List<string> errors, StressOptions o, IReadOnlySet<string> given, Func<string, string?> environment)
    {
        string role = o.Role.ToLowerInvariant();
        string scenario = o.Scenario.ToLowerInvariant();
        bool oneRun = scenario is "s1" or "s2";
        bool dotnetClient = string.Equals(o.ClientStack ?? o.Stack, StackNames.Dotnet, StringComparison.OrdinalIgnoreCase);
        InRange(errors, FlagRanges.Processes, o.Processes);
        InRange(errors, FlagRanges.ServerProcesses, o.ServerProcesses);
        if (o.Processes > 1)
        {
            if (role == "server")
            {
                errors.Add("--processes fans the client out over several processes, and --role server runs none (use --role both with --server-processes, or start several servers)");
            }

            if (!oneRun)
            {
                errors.Add($"--processes splits one s1 or s2 run over several client processes; --scenario {scenario} is not one");
            }

            if (o.ShardCount is not null || o.ShardIndex is not null)
            {
                errors.Add("--processes gives each of its children --shard-index and --shard-count itself: give --processes, or --shard-count and --shard-index, not both");
            }

            if (o.TimeseriesCsv is not null)
            {
                errors.Add("--timeseries-csv follows one process, and --processes runs several (each prints its own progress line)");
            }

            if (o.Ccu < o.Processes)
            {
                errors.Add($"--ccu {o.Ccu} is fewer connections than --processes {o.Processes}: every client process needs one at least");
            }
            else if (o.Rate > 0 && o.Rate * (o.Ccu / o.Processes) / o.Ccu < FlagRanges.Rate.Min)
            {
                // Each child paces its share of --rate (its connections' share), and a child's --rate has the same minimum.
                errors.Add(string.Create(CultureInfo.InvariantCulture,
                    $"--rate {o.Rate} split over --processes {o.Processes} leaves a client process {o.Rate * (o.Ccu / o.Processes) / o.Ccu:G6} packets per second, below the minimum of {FlagRanges.Rate.Min}: raise --rate or lower --processes"));
            }
        }

        if (o.ServerProcesses > 1)
        {
            if (role != "both")
            {
                errors.Add("--server-processes starts that many echo server children, which only --role both does (--role client: list the servers with --servers; --role server: start one process per port)");
            }

            if (dotnetClient)
            {
                errors.Add("--server-processes spreads the netzlink client's connections over several servers; the dotnet client connects to one (use --client-stack netzlink)");
            }

            if (o.Port + o.ServerProcesses - 1 > 65535)
            {
                errors.Add(string.Create(CultureInfo.InvariantCulture,
                    $"--server-processes {o.ServerProcesses} puts its servers on ports {o.Port}..{o.Port + o.ServerProcesses - 1}, beyond 65535: lower --port"));
            }
        }

        if (o.Servers is not null)
        {
            if (role != "client")
            {
                errors.Add("--servers lists the echo servers a --role client connects to; --role both starts its own (see --server-processes)");
            }

            if (given.Contains("--host") || given.Contains("--port"))
            {
                errors.Add("--servers replaces --host and --port: give one or the other");
            }

            if (ServerList.Parse(o.Servers, errors).Count > 1 && dotnetClient)
            {
                errors.Add("--servers with several servers is for the netzlink client; the dotnet client connects to one (use --client-stack netzlink)");
            }
        }

        if (o.StartOnStdin && (role != "client" || scenario != "s2" || o.StartAt is not null))
        {
            errors.Add("--start-on-stdin is for the --role client children of --processes (s2, without --start-at): they say when they are connected and are told when to start");
        }

        if (o.ShardCount is not { } count)
        {
            if (o.ShardIndex is not null)
            {
                errors.Add("--shard-index needs --shard-count (how many client processes share --ccu)");
            }

            return;
        }

        if (!FlagRanges.ShardCount.Contains(count))
        {
            errors.Add(FlagRanges.ShardCount.Error(count));
            return;
        }

        if (role != "client")
        {
            errors.Add("--shard-count and --shard-index make a --role client process one share of a run split over several (--processes does that itself)");
        }

        if (!oneRun)
        {
            errors.Add($"--shard-count splits one s1 or s2 run over several client processes; --scenario {scenario} is not one");
        }

        if (o.ShardIndex is null)
        {
            o.ShardIndex = ClientShares.IndexFromEnvironment(environment, out string? problem);
            if (problem is not null)
            {
                errors.Add(problem);
                return;
            }
        }

        if (o.ShardIndex is not { } index || index < 0 || index >= count)
        {
            string source = given.Contains("--shard-index") ? "--shard-index" : $"--shard-index (from {ClientShares.IndexVariable})";
            errors.Add(string.Create(CultureInfo.InvariantCulture, $"{source} must be 0..{count - 1} for --shard-count {count} (got {o.ShardIndex})"));
        }

        if (o.Ccu < count)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture, $"--ccu {o.Ccu} is fewer connections than --shard-count {count}: every share needs one at least"));
        }
    }

    private static void OneOf(List<string> errors, string flag, string value, IReadOnlyList<string> allowed)
    {
        if (!allowed.Contains(value, StringComparer.OrdinalIgnoreCase))
        {
            errors.Add($"{flag} must be one of {string.Join(", ", allowed)} (got '{value}')");
        }
    }

    private static void InRange(List<string> errors, FlagRange range, double value)
    {
        if (!range.Contains(value))
        {
            errors.Add(range.Error(value));
        }
    }

    private static void Rate(List<string> errors, double rate, string scenario)
    {
        if (!FlagRanges.Rate.Contains(rate))
        {
            errors.Add(FlagRanges.Rate.Error(rate));
        }
        else if (rate > 0 && !(scenario.Equals("s2", StringComparison.OrdinalIgnoreCase) || scenario.Equals("s3", StringComparison.OrdinalIgnoreCase)))
        {
            errors.Add($"--rate paces the s2 load (and s3's runs of it); --scenario {scenario} has no load to pace");
        }
    }

    private static void NotBlank(List<string> errors, string flag, string value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            errors.Add($"{flag} must not be empty");
        }
    }

    private static void StartAt(List<string> errors, StressOptions o, double now)
    {
        if (o.StartAt is not { } startAt)
        {
            return;
        }

        string scenario = o.Scenario.ToLowerInvariant();
        if (string.Equals(o.Role, "server", StringComparison.OrdinalIgnoreCase))
        {
            errors.Add("--start-at times a client's start and --role server runs none (give it to every --role client)");
        }
        else if (scenario == "s1")
        {
            errors.Add("--start-at lines up the measured phases of s0/s2 runs and s1 has none (it only connects)");
        }
        else if (scenario is "s3" or "s4")
        {
            errors.Add($"--start-at holds back one run and {scenario} is a sweep of several (use s0 or s2)");
        }
        else if (!double.IsFinite(startAt) || startAt <= 0)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture, $"--start-at must be a time in Unix seconds such as $(( $(date +%s) + 30 )) (got {startAt})"));
        }
        else if (startAt > now + StartAtMostAheadSeconds)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture,
                $"--start-at {startAt} is {(startAt - now) / 3600:0.#} hours ahead (more than {StartAtMostAheadSeconds / 3600:0} allowed): it takes Unix seconds as `date +%s` prints them, not milliseconds"));
        }
        else if (startAt < now - StartAtMostPastSeconds)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture,
                $"--start-at {startAt} passed {now - startAt:0} s ago (more than {StartAtMostPastSeconds:0} s): give a time ahead such as $(( $(date +%s) + 30 ))"));
        }
    }

    private static void NotBlankPath(List<string> errors, string flag, string? value)
    {
        if (value is not null && string.IsNullOrWhiteSpace(value))
        {
            errors.Add($"{flag} needs a file path");
        }
    }
}
