// Strict binding of a hosted engine's configuration section, beside NetZlinkOptionsValidator (which
// names unknown keys of the section and of its Health, Channel, Tls and Engine sections). The engine's
// settings may sit in the section itself or in its Engine subsection; both are bound, so a setting
// given in both places would let one silently override the other. This check refuses that (one line
// naming both keys), and names the unknown keys one level further down that the validator does not
// look at: those of Engine:Tls, Engine:Channel... (a subsection of the Engine subsection), and anything
// under a setting that is a single value (ConnectRetries:x).
using System.Reflection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;
using NetZlink.Engine;

namespace NetZlink.Extensions.Hosting;

internal static class ConfigurationKeyCheck
{
    private const string EngineSection = "Engine";

    private static readonly Dictionary<string, PropertyInfo> EngineProperties = Properties(typeof(EngineOptions));

    /// <summary>One line per key of <paramref name="section"/> that binding would use silently wrong.</summary>
    public static IEnumerable<string> Problems(IConfiguration section, string keyPrefix, string engineKind)
    {
        IConfigurationSection engine = section.GetSection(EngineSection);
        var flat = section.GetChildren().ToDictionary(c => c.Key, StringComparer.OrdinalIgnoreCase);
        foreach (IConfigurationSection nested in engine.GetChildren())
        {
            if (EngineProperties.ContainsKey(nested.Key) && flat.TryGetValue(nested.Key, out IConfigurationSection? twin))
            {
                yield return $"{keyPrefix}{twin.Key} and {keyPrefix}{EngineSection}:{nested.Key} are both set: an engine setting goes either in the section or in its {EngineSection} subsection, not both (one would override the other)";
            }
        }

        // Below the Engine subsection: its own subsections and single values.
        foreach (IConfigurationSection nested in engine.GetChildren())
        {
            if (EngineProperties.TryGetValue(nested.Key, out PropertyInfo? property))
            {
                foreach (string unknown in UnknownBelow(property, nested, $"{EngineSection}:{nested.Key}"))
                {
                    yield return $"{keyPrefix}{unknown} is not a setting of a NetZlink {engineKind} engine (misspelt? docs/hosting.md lists them)";
                }
            }
        }

        // Below the section's own settings of a single value (the validator looks at one level only).
        foreach (IConfigurationSection child in flat.Values)
        {
            if (EngineProperties.TryGetValue(child.Key, out PropertyInfo? property) && IsSingleValue(property.PropertyType))
            {
                foreach (IConfigurationSection below in child.GetChildren())
                {
                    yield return $"{keyPrefix}{child.Key}:{below.Key} is not a setting of a NetZlink {engineKind} engine ({child.Key} takes a single value)";
                }
            }
        }
    }

    // The keys under a setting that bind to nothing: anything under a single value; for an object (Tls),
    // its unknown keys. A list (Endpoints) takes any index.
    private static IEnumerable<string> UnknownBelow(PropertyInfo property, IConfigurationSection section, string path)
    {
        Type type = Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
        if (IsSingleValue(type))
        {
            foreach (IConfigurationSection below in section.GetChildren())
            {
                yield return $"{path}:{below.Key}";
            }
        }
        else if (type.IsClass && !type.IsAbstract && type.Namespace?.StartsWith("NetZlink", StringComparison.Ordinal) == true)
        {
            Dictionary<string, PropertyInfo> known = Properties(type);
            foreach (IConfigurationSection below in section.GetChildren())
            {
                if (!known.ContainsKey(below.Key))
                {
                    yield return $"{path}:{below.Key}";
                }
            }
        }
    }

    private static bool IsSingleValue(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        return type.IsPrimitive || type.IsEnum || type == typeof(string) || type == typeof(decimal) || type == typeof(TimeSpan);
    }

    private static Dictionary<string, PropertyInfo> Properties(Type type)
        => type.GetProperties(BindingFlags.Public | BindingFlags.Instance).ToDictionary(p => p.Name, StringComparer.OrdinalIgnoreCase);
}

/// <summary>Runs <see cref="ConfigurationKeyCheck"/> when the host starts (ValidateOnStart), for the options named <paramref name="optionsName"/>.</summary>
internal sealed class ConfigurationKeyValidator<TOptions>(string optionsName, string keyPrefix, IConfiguration section) : IValidateOptions<TOptions>
    where TOptions : NetZlinkEngineOptions
{
    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        if (!string.Equals(name ?? Options.DefaultName, optionsName, StringComparison.Ordinal))
        {
            return ValidateOptionsResult.Skip;
        }

        string kind = options is NetZlinkServerEngineOptions ? "server" : "client";
        List<string> failures = ConfigurationKeyCheck.Problems(section, keyPrefix, kind).ToList();
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
