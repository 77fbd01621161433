// Checks a hosted engine's settings when the host starts (ValidateOnStart): every bad setting is
// one failure line that names its configuration key and says what is wanted, so an operator sees
// all of them at once. The bounds are EngineOptions.Validate's (the engine throws for the first
// of the same problems when it is made); this adds the hosting settings and the keys' names.
using System.Globalization;
using System.Reflection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

internal sealed class NetZlinkOptionsValidator<TOptions>(string optionsName, string keyPrefix, IConfiguration? section) : IValidateOptions<TOptions>
    where TOptions : NetZlinkEngineOptions
{
    private static readonly string[] Schemes = ["tcp://", "tls://", "ws://", "wss://"];

    // What a section may hold: the engine's settings and the hosting ones, side by side (and the
    // nested sections' own settings); a key outside them is a typo the binder would skip silently.
    private static readonly HashSet<string> Known = Names(typeof(TOptions), typeof(EngineOptions));
    private static readonly Dictionary<string, HashSet<string>> KnownNested = new(StringComparer.OrdinalIgnoreCase)
    {
        ["Health"] = Names(typeof(NetZlinkHealthOptions)),
        ["Channel"] = Names(typeof(EngineChannelOptions)),
        ["Tls"] = Names(typeof(EngineTlsOptions)),
        ["Engine"] = Names(typeof(EngineOptions)),
        ["Reconnect"] = Names(typeof(ReconnectPolicy)),
    };

    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        if (!string.Equals(name ?? Options.DefaultName, optionsName, StringComparison.Ordinal))
        {
            return ValidateOptionsResult.Skip;
        }

        var failures = new List<string>();
        foreach (string unknown in UnknownKeys())
        {
            failures.Add($"{keyPrefix}{unknown} is not a setting of a NetZlink {(options is NetZlinkServerEngineOptions ? "server" : "client")} engine (misspelt? docs/hosting.md lists them)");
        }

        foreach ((string key, string? problem) in Problems(options))
        {
            if (problem is not null)
            {
                failures.Add($"{keyPrefix}{key} {problem}");
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static IEnumerable<(string Key, string? Problem)> Problems(TOptions options)
    {
        EngineOptions e = options.Engine ?? new EngineOptions();
        bool server = options is NetZlinkServerEngineOptions;
        if (options is NetZlinkClientEngineOptions client)
        {
            yield return ("ConnectionCount", AtLeast(client.ConnectionCount, 1));
        }

        // The engine's own bounds, in one place (EngineOptions.Validate): its settings sit in the
        // section itself, so each setting's name is its key.
        foreach ((string option, string problem) in e.Validate(server))
        {
            yield return (option, problem);
        }

        if (e.Endpoints is { Count: > 0 })
        {
            // Configuration's own check: an endpoint the engine would refuse later, named by its key now.
            for (int i = 0; i < e.Endpoints.Count; i++)
            {
                string endpoint = e.Endpoints[i] ?? string.Empty;
                bool known = Schemes.Any(s => endpoint.StartsWith(s, StringComparison.Ordinal) && endpoint.Length > s.Length);
                yield return ($"Endpoints:{i}", known ? null : $"is '{endpoint}': an engine endpoint is tcp://host:port, tls://host:port, ws://host:port[/path] or wss://host:port[/path]");
            }
        }

        NetZlinkHealthOptions health = options.Health ?? new NetZlinkHealthOptions();
        yield return ("Health:StartupGracePeriod", health.StartupGracePeriod >= TimeSpan.Zero ? null : $"must not be negative (is {health.StartupGracePeriod:c})");
        yield return ("Health:MinimumConnections", health.MinimumConnections is null or >= 0 ? null : $"must not be negative (is {Show(health.MinimumConnections.Value)})");
        yield return ("Channel:ReceiveCapacityPerShard", AtLeast(options.Channel?.ReceiveCapacityPerShard ?? 1, 1));
    }

    private static HashSet<string> Names(params Type[] types)
        => new(types.SelectMany(t => t.GetProperties(BindingFlags.Public | BindingFlags.Instance)).Select(p => p.Name), StringComparer.OrdinalIgnoreCase);

    /// <summary>Keys of the section (and of its Health, Channel, Tls and Engine sections) that bind to nothing.</summary>
    private IEnumerable<string> UnknownKeys()
    {
        if (section is null)
        {
            yield break;
        }

        foreach (IConfigurationSection child in section.GetChildren())
        {
            if (!Known.Contains(child.Key))
            {
                yield return child.Key;
            }
            else if (KnownNested.TryGetValue(child.Key, out HashSet<string>? nested))
            {
                foreach (IConfigurationSection grandchild in child.GetChildren())
                {
                    if (!nested.Contains(grandchild.Key))
                    {
                        yield return $"{child.Key}:{grandchild.Key}";
                    }
                }
            }
        }
    }

    private static string? AtLeast(long value, long least, string? note = null)
        => value >= least ? null : $"must be at least {Show(least)}{(note is null ? string.Empty : $" ({note})")} (is {Show(value)})";

    private static string Show<T>(T value)
        where T : IFormattable => value.ToString(null, CultureInfo.InvariantCulture);
}
