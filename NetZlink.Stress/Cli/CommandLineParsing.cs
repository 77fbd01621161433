// Reads the command line with CommandLineParser and maps the flags onto ScenarioSettings.
// CommandLineParser prints nothing itself: every message is ours, one line each.
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Reflection;
using CommandLine;
using CommandLine.Text;
using NetZlink.Stress.Faults;
using NetZlink.Stress.Hosting;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Cli;

/// <summary>Turns argv into a <see cref="ParseOutcome"/>.</summary>
internal static class CommandLineParsing
{
    /// <summary>Every --flag that takes a value, with the type of that value.</summary>
    private static readonly Dictionary<string, Type> ValueFlags = typeof(StressOptions).GetProperties()
        .Select(p => (Property: p, Option: p.GetCustomAttribute<OptionAttribute>()))
        .Where(x => x.Option is not null && x.Property.PropertyType != typeof(bool))
        .ToDictionary(x => x.Option!.LongName, x => x.Property.PropertyType, StringComparer.Ordinal);

    /// <summary>Parses and validates <paramref name="args"/>.</summary>
    /// <remarks>
    /// CommandLineParser finds the flags by reflection over <see cref="StressOptions"/> (its properties,
    /// their attributes, its constructor): a trimmed or native AOT build must keep all of them.
    /// </remarks>
    [DynamicDependency(DynamicallyAccessedMemberTypes.All, typeof(StressOptions))]
    public static ParseOutcome Parse(IReadOnlyList<string> args)
    {
        // CommandLineParser takes a flag with its value missing for one with its default
        // ("--ccu" last) or swallows the next flag as the value ("--scenario --quiet"): catch those first.
        List<string> missing = FlagsMissingValues(args);
        if (missing.Count > 0)
        {
            return ParseOutcome.Usage(missing.Select(flag => $"{flag} needs a value").ToArray());
        }

        // CommandLineParser reads numbers with thousands separators ("--warmup 1,5" is 15 s):
        // a number flag takes digits, one '.', an exponent and nothing else.
        List<string> malformed = MalformedNumbers(args);
        if (malformed.Count > 0)
        {
            return ParseOutcome.Usage(malformed);
        }

        using var parser = new Parser(s =>
        {
            s.HelpWriter = null;
            s.CaseSensitive = true;
            s.CaseInsensitiveEnumValues = false;
            s.IgnoreUnknownArguments = false;
            s.AutoHelp = true;
            s.AutoVersion = true;
            s.ParsingCulture = CultureInfo.InvariantCulture;
            s.AllowMultiInstance = false;
        });

        ParserResult<StressOptions> result = parser.ParseArguments<StressOptions>(args);
        if (result is NotParsed<StressOptions> notParsed)
        {
            return FromErrors(notParsed, args);
        }

        StressOptions options = ((Parsed<StressOptions>)result).Value;
        IReadOnlyList<string> errors = OptionsValidator.Validate(options, GivenFlags(args));
        return errors.Count > 0 ? ParseOutcome.Usage(errors) : ParseOutcome.Run(ToInvocation(options));
    }

    /// <summary>The version printed by --version.</summary>
    public static string Version
    {
        get
        {
            Assembly assembly = typeof(CommandLineParsing).Assembly;
            string? informational = assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
            return informational ?? assembly.GetName().Version?.ToString() ?? "0.0.0";
        }
    }

    private static StressInvocation ToInvocation(StressOptions o)
    {
        string scenario = o.Scenario.ToLowerInvariant();
        (int ccu, int offset) = o.ShardCount is { } shards && o.ShardIndex is { } index ? ClientShares.Of(o.Ccu, shards, index) : (o.Ccu, 0);
        IReadOnlyList<string> servers = o.Servers is null ? [] : ServerList.Parse(o.Servers, []);
        string host = o.Host;
        int port = o.Port;
        if (servers.Count == 1)
        {
            // One server is --host and --port by another name (and so runs on either client stack).
            HostPort server = HostPort.Parse(servers[0]);
            host = server.BareHost;
            port = server.Port;
            servers = [];
        }

        var settings = new ScenarioSettings
        {
            // s3 and s4 are made of s2 (and s0, s1) runs: SweepPlan takes it from here.
            Scenario = scenario is "s3" or "s4" ? "s2" : scenario,
            ScenarioId = o.ScenarioId,
            Transport = o.Transport.ToLowerInvariant(),
            TlsCertificateFile = FullPath(o.TlsCert),
            TlsKeyFile = FullPath(o.TlsKey),
            TlsCaFile = FullPath(o.TlsCa),
            Host = host,
            BindHost = o.BindHost,
            Port = port,
            Ccu = ccu,
            Servers = servers,
            ServerOffset = offset,
            Size = o.Size,
            Inflight = o.Inflight,
            WarmupSeconds = o.Warmup,
            MeasureSeconds = o.Measure,
            DrainTimeoutSeconds = o.DrainTimeout,
            StartAt = o.StartAt,
            StartGate = o.StartOnStdin ? StdinStartGate.WaitAsync : null,
            ConnectConcurrency = o.ConnectConcurrency,
            ConnectTimeoutSeconds = o.ConnectTimeout,
            ConnectRetries = o.ConnectRetries,
            ConnectRetryDelayMs = o.ConnectRetryDelayMs,
            Backlog = o.Backlog,
            Hwm = o.Hwm,
            SendBuffer = o.SendBuffer,
            ReceiveBuffer = o.ReceiveBuffer,
            IoThreads = o.IoThreads,
            Shards = o.Shards,
            SendBatch = o.SendBatch,
            LatencySampleRate = o.LatencySampleRate,
            Rate = o.Rate,
            ClientStack = (o.ClientStack ?? o.Stack).ToLowerInvariant(),
            ServerStack = (o.ServerStack ?? o.Stack).ToLowerInvariant(),
            Fault = FaultModeNames.Parse(o.Fault),
            FaultEvery = o.FaultEvery,
            FaultAfterSeconds = o.FaultAfter,
        };
        StressRole role = Enum.Parse<StressRole>(o.Role, ignoreCase: true);
        return new StressInvocation(scenario, role, settings, o.MetricsCsv, o.SummaryJson, o.Quiet, o.TimeseriesCsv)
        {
            JsonHistogram = o.JsonHistogram,
            ExitOnStdinEof = o.ExitOnStdinEof,
            Processes = o.Processes,
            ServerProcesses = o.ServerProcesses,
        };
    }

    private static string? FullPath(string? path) => path is null ? null : Path.GetFullPath(path);

    private static ParseOutcome FromErrors(NotParsed<StressOptions> notParsed, IReadOnlyList<string> args)
    {
        if (notParsed.Errors.Any(e => e.Tag == ErrorType.HelpRequestedError))
        {
            return ParseOutcome.Print(HelpFor(notParsed));
        }

        if (notParsed.Errors.Any(e => e.Tag == ErrorType.VersionRequestedError))
        {
            return ParseOutcome.Print($"NetZlink.Stress {Version}");
        }

        return ParseOutcome.Usage(notParsed.Errors.Select(e => Describe(e, args)).Distinct().ToArray());
    }

    private static List<string> FlagsMissingValues(IReadOnlyList<string> args)
    {
        var missing = new List<string>();
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            if (arg == "--")
            {
                break;
            }

            if (!arg.StartsWith("--", StringComparison.Ordinal) || arg.Contains('=', StringComparison.Ordinal)
                || !ValueFlags.ContainsKey(arg[2..]))
            {
                continue;
            }

            if (i + 1 >= args.Count || IsFlag(args[i + 1]))
            {
                missing.Add(arg);
            }
            else
            {
                i++;
            }
        }

        return missing;
    }

    /// <summary>An error for each value of a number flag that is not a plain number ("1,5", "0x10", "1_000").</summary>
    private static List<string> MalformedNumbers(IReadOnlyList<string> args)
    {
        var errors = new List<string>();
        for (int i = 0; i < args.Count && args[i] != "--"; i++)
        {
            string arg = args[i];
            if (!arg.StartsWith("--", StringComparison.Ordinal))
            {
                continue;
            }

            string[] parts = arg.Split('=', 2);
            string name = parts[0][2..];
            if (!ValueFlags.TryGetValue(name, out Type? type))
            {
                continue;
            }

            string? value = parts.Length == 2 ? parts[1] : (i + 1 < args.Count ? args[++i] : null);
            if (value is null)
            {
                continue;
            }

            bool plain = type == typeof(double) || type == typeof(double?)
                ? double.TryParse(value, NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint | NumberStyles.AllowExponent, CultureInfo.InvariantCulture, out _)
                : type != typeof(int) && type != typeof(int?) && type != typeof(long) && type != typeof(long?)
                    || long.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out _);
            if (!plain)
            {
                errors.Add(BadValue(name, [arg, value]));
            }
        }

        return errors;
    }

    /// <summary>The --flags <paramref name="args"/> names ("--ccu" for "--ccu 5" and "--ccu=5"), up to "--".</summary>
    private static HashSet<string> GivenFlags(IReadOnlyList<string> args)
    {
        var given = new HashSet<string>(StringComparer.Ordinal);
        foreach (string arg in args.TakeWhile(a => a != "--"))
        {
            if (arg.StartsWith("--", StringComparison.Ordinal))
            {
                given.Add(arg.Split('=', 2)[0]);
            }
        }

        return given;
    }

    // "-5" is a (bad) value, "-x" and "--x" are flags.
    private static bool IsFlag(string arg) =>
        arg.Length > 1 && arg[0] == '-' && !(char.IsAsciiDigit(arg[1]) || arg[1] == '.');

    /// <summary>The value given to --<paramref name="name"/> (the last one), for error messages.</summary>
    private static string? GivenValue(IReadOnlyList<string> args, string name)
    {
        string? value = null;
        string flag = "--" + name;
        for (int i = 0; i < args.Count; i++)
        {
            if (args[i] == flag && i + 1 < args.Count)
            {
                value = args[i + 1];
            }
            else if (args[i].StartsWith(flag + "=", StringComparison.Ordinal))
            {
                value = args[i][(flag.Length + 1)..];
            }
        }

        return value;
    }

    private static string HelpFor(ParserResult<StressOptions> result)
    {
        HelpText help = HelpText.AutoBuild(result, h =>
        {
            h.Heading = $"NetZlink.Stress {Version}: the STREAM echo benchmark (s0-s4) over NetZlink or plain .NET sockets";
            h.Copyright = string.Empty;
            h.AdditionalNewLineAfterOption = false;
            h.AddDashesToOption = true;
            h.MaximumDisplayWidth = 100;
            h.AddPreOptionsLine("usage: NetZlink.Stress [--scenario s2] [--stack netzlink|dotnet] [--role both] [--ccu 10000] … [--metrics-csv PATH]");
            h.AddPreOptionsLine("stacks: both speak [u32 BE length][body]; mix them with --client-stack/--server-stack (e.g. a dotnet client against the netzlink server)");
            h.AddPreOptionsLine("exit codes: 0 PASS or SKIP, 1 bad usage, 2 FAIL, interrupted or an operational error");
            h.AddPreOptionsLine("every flag is checked, against the range its help gives, before a server starts or a socket opens");
            h.AddPreOptionsLine("--role server runs until Ctrl+C or SIGTERM; --exit-on-stdin-eof also stops it when its stdin ends (for a parent's child)");
            h.AddPreOptionsLine("verbs: `compare` runs every stack alike, `merge` combines client hosts' --json-histogram summaries, `counts` judges limit_echo's COUNTS line (each has --help)");
            return h;
        }, e => e, verbsIndex: false);
        return help.ToString();
    }

    private static string Describe(Error error, IReadOnlyList<string> args) => error switch
    {
        UnknownOptionError u => $"unknown flag {Dashed(u.Token)} (see --help)",
        MissingValueOptionError m => $"{Dashed(m.NameInfo.NameText)} needs a value",
        BadFormatConversionError b => BadValue(b.NameInfo.LongName, args),
        RepeatedOptionError r => $"{Dashed(r.NameInfo.NameText)} is given more than once",
        NamedError n => $"{Dashed(n.NameInfo.NameText)}: {n.Tag} (see --help)",
        TokenError t => $"cannot read '{t.Token}': {t.Tag} (see --help)",
        _ => $"cannot read the command line: {error.Tag} (see --help)",
    };

    private static string BadValue(string name, IReadOnlyList<string> args)
    {
        string expected = ValueFlags.GetValueOrDefault(name) switch
        {
            Type t when t == typeof(int) || t == typeof(int?) => "a whole number",
            Type t when t == typeof(double) || t == typeof(double?) => "a number",
            _ => "a valid value",
        };
        if (FlagRanges.For("--" + name) is { } range)
        {
            expected += ": " + range.Text;
        }

        return GivenValue(args, name) is { } given
            ? $"--{name} must be {expected} (got '{given}')"
            : $"--{name} must be {expected}";
    }

    private static string Dashed(string name) =>
        name.StartsWith('-') ? name : (name.Length == 1 ? "-" + name : "--" + name);
}
