// Checks a hosted engine's settings when the host starts (ValidateOnStart): every bad setting is
// one failure line that names its configuration key and says what is wanted, so an operator sees
// all of them at once. The bounds are EngineOptions.Validate's (the engine throws for the first
// of the same problems when it is made); this adds the hosting settings and the keys' names.
// The keys that bind to nothing are ConfigurationKeyCheck's (one walker for every hosted kind).
using System.Globalization;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

internal static class NetZlinkOptionsValidator<TOptions>
    where TOptions : NetZlinkEngineOptions
{
    private static readonly string[] Schemes = ["tcp://", "tls://", "ws://", "wss://"];

    public static IEnumerable<(string Key, string? Problem)> Problems(TOptions options)
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
        yield return ("Health:StartupGracePeriod", SettingChecks.NotNegative(health.StartupGracePeriod));
        yield return ("Health:MinimumConnections", health.MinimumConnections is null or >= 0 ? null : $"must not be negative (is {Show(health.MinimumConnections.Value)})");
        yield return ("Channel:ReceiveCapacityPerShard", AtLeast(options.Channel?.ReceiveCapacityPerShard ?? 1, 1));
    }

    private static string? AtLeast(long value, long least, string? note = null)
        => value >= least ? null : $"must be at least {Show(least)}{(note is null ? string.Empty : $" ({note})")} (is {Show(value)})";

    private static string Show<T>(T value)
        where T : IFormattable => value.ToString(null, CultureInfo.InvariantCulture);
}
