// Checks a hosted gateway's settings when the host starts (ValidateOnStart), as the engines' are
// checked: every bad setting is one failure line that names its configuration key and says what is
// wanted, and every key of the section that binds to nothing (a misspelt setting the binder would
// skip without a word) is refused. The bounds are those ZlinkGateway, ZlinkDiscovery and
// ZlinkReceiver enforce when they are made or used (service names, routing ids, TLS), named by key.
using System.Collections;
using System.Globalization;
using System.Reflection;
using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;
using NetZlink.Services;

namespace NetZlink.Extensions.Hosting;

internal sealed class NetZlinkGatewayOptionsValidator(string optionsName, string keyPrefix, IConfiguration? section) : IValidateOptions<NetZlinkGatewayOptions>
{
    private const string GatewaySection = nameof(NetZlinkGatewayOptions.Gateway);

    // A service name, an endpoint, a routing id: at most 255 bytes on the wire (zlink's service protocol).
    private const int MaxTextBytes = 255;

    private static readonly string[] Schemes = ["tcp://", "ipc://", "inproc://", "tls://", "ws://", "wss://"];

    private static readonly Dictionary<string, PropertyInfo> GatewayProperties = Properties(typeof(GatewayOptions));

    // What the section may hold: the hosting settings and the gateway's, side by side.
    private static readonly Dictionary<string, PropertyInfo> Known = new(
        Properties(typeof(NetZlinkGatewayOptions)).Concat(GatewayProperties), StringComparer.OrdinalIgnoreCase);

    public ValidateOptionsResult Validate(string? name, NetZlinkGatewayOptions options)
    {
        if (!string.Equals(name ?? Options.DefaultName, optionsName, StringComparison.Ordinal))
        {
            return ValidateOptionsResult.Skip;
        }

        var failures = new List<string>();
        if (section is not null)
        {
            failures.AddRange(KeyProblems(section, keyPrefix));
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

    private static IEnumerable<(string Key, string? Problem)> Problems(NetZlinkGatewayOptions options)
    {
        (string Key, string Endpoint)[] registries = [.. options.AllRegistryEndpoints()];
        if (registries.Length == 0)
        {
            yield return (nameof(NetZlinkGatewayOptions.RegistryEndpoint), "is not set: name the publish endpoint of the registry to follow (RegistryEndpoint, or RegistryEndpoints:0, RegistryEndpoints:1 ... for several)");
        }

        foreach ((string key, string endpoint) in registries)
        {
            bool known = Schemes.Any(s => endpoint.StartsWith(s, StringComparison.Ordinal) && endpoint.Length > s.Length);
            yield return (key, known ? null : $"is '{endpoint}': a registry's publish endpoint is tcp://host:port, ipc://path, inproc://name, tls://host:port, ws://host:port[/path] or wss://host:port[/path]");
        }

        yield return (nameof(NetZlinkGatewayOptions.RegistryTimeout), Positive(options.RegistryTimeout));
        for (int i = 0; i < options.Services.Count; i++)
        {
            yield return ($"{nameof(NetZlinkGatewayOptions.Services)}:{i}", ServiceNameProblem(options.Services[i]));
        }

        foreach ((string service, LoadBalancing strategy) in options.LoadBalancing)
        {
            string key = $"{nameof(NetZlinkGatewayOptions.LoadBalancing)}:{service}";
            yield return (key, ServiceNameProblem(service) is { } problem ? "names no valid service: the service name " + problem : null);
            yield return (key, strategy is Services.LoadBalancing.RoundRobin or Services.LoadBalancing.Weighted ? null : $"must be RoundRobin or Weighted (is {strategy})");
        }

        GatewayOptions gateway = options.Gateway ?? new GatewayOptions();
        yield return (nameof(GatewayOptions.SendPatience), Positive(gateway.SendPatience));
        if (gateway.RoutingId is { } rid)
        {
            yield return (nameof(GatewayOptions.RoutingId), rid.Length is >= 1 and <= MaxTextBytes ? null : $"must have 1 to {MaxTextBytes} bytes (has {rid.Length})");
        }

        if (gateway.TlsCaFile is null && !gateway.TlsTrustSystem)
        {
            yield return (nameof(GatewayOptions.TlsHostname), gateway.TlsHostname is null ? null : "is set without TlsCaFile or TlsTrustSystem to verify the receivers' certificates against");
        }
        else if (gateway.TlsCaFile is not null)
        {
            yield return (nameof(GatewayOptions.TlsCaFile), File.Exists(gateway.TlsCaFile) ? null : $"is '{gateway.TlsCaFile}': no such file");
        }

        TimeSpan grace = options.Health?.StartupGracePeriod ?? TimeSpan.Zero;
        yield return ("Health:StartupGracePeriod", grace >= TimeSpan.Zero ? null : $"must not be negative (is {grace:c})");
    }

    /// <summary>Null when <paramref name="service"/> is a name the service protocol carries (ZlinkReceiver.CheckText's rules), else what is wrong.</summary>
    private static string? ServiceNameProblem(string? service)
    {
        if (string.IsNullOrEmpty(service))
        {
            return "is empty";
        }

        if (service.Contains('\0', StringComparison.Ordinal))
        {
            return "holds a NUL character";
        }

        int bytes;
        try
        {
            bytes = new UTF8Encoding(false, true).GetByteCount(service);
        }
        catch (EncoderFallbackException)
        {
            return "is not valid UTF-16 text (an unpaired surrogate)";
        }

        return bytes <= MaxTextBytes ? null : $"has {bytes.ToString(CultureInfo.InvariantCulture)} bytes of UTF-8, more than {MaxTextBytes}";
    }

    private static string? Positive(TimeSpan value) => value > TimeSpan.Zero ? null : $"must be positive (is {value:c})";

    /// <summary>
    /// The keys of the section that bind to nothing, and a gateway setting given both in the
    /// section and in its Gateway subsection (both are bound, so one would override the other).
    /// </summary>
    private static IEnumerable<string> KeyProblems(IConfiguration section, string prefix)
    {
        var flat = section.GetChildren().ToDictionary(c => c.Key, StringComparer.OrdinalIgnoreCase);
        foreach (IConfigurationSection nested in section.GetSection(GatewaySection).GetChildren())
        {
            if (GatewayProperties.ContainsKey(nested.Key) && flat.TryGetValue(nested.Key, out IConfigurationSection? twin))
            {
                yield return $"{prefix}{twin.Key} and {prefix}{GatewaySection}:{nested.Key} are both set: a gateway setting goes either in the section or in its {GatewaySection} subsection, not both (one would override the other)";
            }
        }

        foreach (IConfigurationSection child in flat.Values)
        {
            if (!Known.TryGetValue(child.Key, out PropertyInfo? property))
            {
                yield return prefix + Unknown(child.Key);
                continue;
            }

            foreach (string problem in Below(child, child.Key, property.PropertyType))
            {
                yield return prefix + problem;
            }
        }
    }

    // The keys under a setting of type `type` that bind to nothing: anything under a single value;
    // under a list, keys that are no index; under an object (Gateway, Health), its unknown keys.
    private static IEnumerable<string> Below(IConfigurationSection section, string path, Type type)
    {
        if (IsSingleValue(type))
        {
            foreach (IConfigurationSection below in section.GetChildren())
            {
                yield return $"{path}:{below.Key} is not a setting of a NetZlink gateway ({path} takes a single value)";
            }

            yield break;
        }

        bool map = type.IsGenericType && type.GetGenericTypeDefinition() == typeof(IDictionary<,>);
        Type? element = map ? type.GetGenericArguments()[1] : ListElement(type);
        Dictionary<string, PropertyInfo>? known = element is null ? Properties(type) : null;
        foreach (IConfigurationSection below in section.GetChildren())
        {
            string at = $"{path}:{below.Key}";
            if (known is not null)
            {
                if (known.TryGetValue(below.Key, out PropertyInfo? property))
                {
                    foreach (string problem in Below(below, at, property.PropertyType))
                    {
                        yield return problem;
                    }
                }
                else
                {
                    yield return Unknown(at);
                }
            }
            else if (!map && !int.TryParse(below.Key, NumberStyles.None, CultureInfo.InvariantCulture, out _))
            {
                yield return $"{at} is not a setting of a NetZlink gateway ({path} is a list: {path}:0, {path}:1 ...)";
            }
            else
            {
                foreach (string problem in Below(below, at, element!))
                {
                    yield return problem;
                }
            }
        }
    }

    private static string Unknown(string path) => $"{path} is not a setting of a NetZlink gateway (misspelt? docs/hosting.md lists them)";

    private static Type? ListElement(Type type) =>
        type != typeof(string) && typeof(IEnumerable).IsAssignableFrom(type) && type.IsGenericType ? type.GetGenericArguments()[0] : null;

    private static bool IsSingleValue(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        return type.IsPrimitive || type.IsEnum || type == typeof(string) || type == typeof(decimal) || type == typeof(TimeSpan) || type == typeof(byte[]);
    }

    private static Dictionary<string, PropertyInfo> Properties(Type type)
        => type.GetProperties(BindingFlags.Public | BindingFlags.Instance).ToDictionary(p => p.Name, StringComparer.OrdinalIgnoreCase);
}
