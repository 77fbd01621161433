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

    /// <summary>Returns every problem found, empty when the options can run.</summary>
    public static IReadOnlyList<string> Validate(StressOptions o)
    {
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
        int lowestPort = serverOnly ? 0 : 1;
        if (o.Port < lowestPort || o.Port > 65535)
        {
            errors.Add(serverOnly
                ? $"--port must be between 0 and 65535 (got {o.Port})"
                : $"--port must be between 1 and 65535 (got {o.Port}; 0 is allowed only with --role server)");
        }

        AtLeast(errors, "--ccu", o.Ccu, 1);
        AtLeast(errors, "--size", o.Size, 9, " (the packet body holds the phase byte and an 8-byte timestamp)");
        AtLeast(errors, "--inflight", o.Inflight, 1);
        Seconds(errors, "--warmup", o.Warmup);
        Seconds(errors, "--measure", o.Measure);
        Seconds(errors, "--drain-timeout", o.DrainTimeout);
        AtLeast(errors, "--connect-concurrency", o.ConnectConcurrency, 1);
        Seconds(errors, "--connect-timeout", o.ConnectTimeout);
        AtLeast(errors, "--connect-retries", o.ConnectRetries, 0);
        AtLeast(errors, "--connect-retry-delay-ms", o.ConnectRetryDelayMs, 0);
        AtLeast(errors, "--backlog", o.Backlog, 1);
        AtLeast(errors, "--hwm", o.Hwm, 0, " (0 = no limit)");
        AtLeast(errors, "--sndbuf", o.SendBuffer, 0, " (0 = the system default)");
        AtLeast(errors, "--rcvbuf", o.ReceiveBuffer, 0, " (0 = the system default)");
        AtLeast(errors, "--io-threads", o.IoThreads, 1);
        AtLeast(errors, "--shards", o.Shards, 0, " (0 = one per core)");
        AtLeast(errors, "--send-batch", o.SendBatch, 1);
        AtLeast(errors, "--latency-sample-rate", o.LatencySampleRate, 0, " (0 = no latency)");
        Rate(errors, o.Rate, o.Scenario);
        OneOf(errors, "--fault", o.Fault, FaultModeNames.All);
        if (string.Equals(o.Role, "client", StringComparison.OrdinalIgnoreCase) && !string.Equals(o.Fault, "none", StringComparison.OrdinalIgnoreCase))
        {
            errors.Add($"--fault {o.Fault} makes the built-in server misbehave, and --role client runs none (use --role both or server)");
        }

        AtLeast(errors, "--fault-every", o.FaultEvery, 1, " (1 = every connection)");
        Seconds(errors, "--fault-after", o.FaultAfter);

        if (o.ScenarioId is not null && (o.ScenarioId.Length == 0 || o.ScenarioId.Any(char.IsControl)))
        {
            errors.Add("--scenario-id must be non-empty and printable");
        }

        NotBlankPath(errors, "--metrics-csv", o.MetricsCsv);
        NotBlankPath(errors, "--summary-json", o.SummaryJson);
        StartAt(errors, o, UnixTime.Now);
        if (o.JsonHistogram && o.SummaryJson is null)
        {
            errors.Add("--json-histogram adds the latency histogram to the --summary-json file: give --summary-json PATH too");
        }

        if (o.ExitOnStdinEof && !serverOnly)
        {
            errors.Add("--exit-on-stdin-eof is for --role server (a server started as a child, stopped when its parent closes its stdin); --role both stops its own server child");
        }

        foreach (string word in o.Extra)
        {
            errors.Add($"unexpected argument '{word}' (every setting is a --flag; see --help)");
        }

        return errors;
    }

    private static void OneOf(List<string> errors, string flag, string value, IReadOnlyList<string> allowed)
    {
        if (!allowed.Contains(value, StringComparer.OrdinalIgnoreCase))
        {
            errors.Add($"{flag} must be one of {string.Join(", ", allowed)} (got '{value}')");
        }
    }

    private static void AtLeast(List<string> errors, string flag, int value, int minimum, string why = "")
    {
        if (value < minimum)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture, $"{flag} must be at least {minimum}{why} (got {value})"));
        }
    }

    private static void Seconds(List<string> errors, string flag, double value)
    {
        if (!double.IsFinite(value) || value < 0)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture, $"{flag} must be a non-negative number of seconds (got {value})"));
        }
    }

    private static void Rate(List<string> errors, double rate, string scenario)
    {
        if (!double.IsFinite(rate) || rate < 0)
        {
            errors.Add(string.Create(CultureInfo.InvariantCulture, $"--rate must be a non-negative number of packets per second (got {rate}; 0 = closed loop)"));
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
