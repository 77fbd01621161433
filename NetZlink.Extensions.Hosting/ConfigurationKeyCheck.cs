// Strict binding of a hosted thing's configuration section (engines, gateways, receivers, sockets):
// the one place that finds the keys the configuration binder would use silently wrong, so every
// registration refuses them with the same lines. It walks the section against the options types
// whose settings sit in it (reflection over their public properties, case-insensitive as the binder):
//   - a key that is no setting (a misspelt one the binder would skip without a word);
//   - a key under a setting that takes a single value (ConnectRetries:x);
//   - a plain value where a section, a list or a map is expected ("Reconnect": "true", "Endpoints":
//     "tcp://..."), which the binder also skips without a word;
//   - a list entry whose key is no index (Endpoints:x);
//   - a setting that only code can give (an interface: Framer, LoggerFactory);
//   - a setting given both in the section and in its twin subsection (Engine:, Gateway:, Receiver:),
//     since both are bound and one would silently override the other.
using System.Collections;
using System.ComponentModel;
using System.Globalization;
using System.Reflection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace NetZlink.Extensions.Hosting;

/// <summary>What a section holds: the options types whose settings sit in it, and how failure lines name it.</summary>
/// <param name="Subject">How lines name the owner: "client engine", "gateway", "receiver", "socket".</param>
/// <param name="Types">The types whose public properties are the section's settings, side by side.</param>
/// <param name="Twin">The property whose settings may also be written under a subsection of its name (Engine), or null.</param>
/// <param name="TwinNoun">How the "both set" line names one of the twin's settings: "an engine setting".</param>
internal sealed record SectionShape(string Subject, Type[] Types, string? Twin = null, string? TwinNoun = null);

internal static class ConfigurationKeyCheck
{
    /// <summary>One line per key of <paramref name="section"/> that binding would use silently wrong.</summary>
    public static IEnumerable<string> Problems(IConfiguration section, string keyPrefix, SectionShape shape)
    {
        var known = new Dictionary<string, PropertyInfo>(StringComparer.OrdinalIgnoreCase);
        foreach (Type type in shape.Types)
        {
            foreach ((string name, PropertyInfo property) in Properties(type))
            {
                known.TryAdd(name, property);
            }
        }

        var flat = section.GetChildren().ToDictionary(c => c.Key, StringComparer.OrdinalIgnoreCase);
        if (shape.Twin is not null && known.TryGetValue(shape.Twin, out PropertyInfo? twinProperty))
        {
            Dictionary<string, PropertyInfo> twinSettings = Properties(twinProperty.PropertyType);
            foreach (IConfigurationSection nested in section.GetSection(shape.Twin).GetChildren())
            {
                if (twinSettings.ContainsKey(nested.Key) && flat.TryGetValue(nested.Key, out IConfigurationSection? both))
                {
                    yield return $"{keyPrefix}{both.Key} and {keyPrefix}{shape.Twin}:{nested.Key} are both set: {shape.TwinNoun} goes either in the section or in its {shape.Twin} subsection, not both (one would override the other)";
                }
            }
        }

        foreach (IConfigurationSection child in flat.Values)
        {
            IEnumerable<string> problems = known.TryGetValue(child.Key, out PropertyInfo? property)
                ? Below(child, child.Key, property.PropertyType, shape.Subject)
                : [Unknown(child.Key, shape.Subject)];
            foreach (string problem in problems)
            {
                yield return keyPrefix + problem;
            }
        }
    }

    /// <summary>Whether a value of <paramref name="type"/> is written as one configuration value.</summary>
    internal static bool IsSingleValue(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        return type.IsPrimitive || type.IsEnum || type == typeof(string) || type == typeof(decimal) || type == typeof(TimeSpan) || type == typeof(byte[]);
    }

    // The keys at and under `section`, a setting of type `type`, that bind to nothing: anything under
    // a single value; a plain value where a section, list or map is wanted; under a list, keys that
    // are no index; under an object, its unknown keys (and so on down).
    private static IEnumerable<string> Below(IConfigurationSection section, string path, Type type, string subject)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        if (IsSingleValue(type))
        {
            foreach (IConfigurationSection below in section.GetChildren())
            {
                yield return $"{path}:{below.Key} is not a setting of a NetZlink {subject} ({path} takes a single value)";
            }

            if (section.Value is { Length: > 0 } value && ConversionProblem(value, type) is { } problem)
            {
                yield return $"{path} is '{value}': {problem}";
            }

            yield break;
        }

        if (type.IsInterface && ListElement(type) is null && !IsMap(type))
        {
            yield return $"{path} cannot be set from configuration: the {path} of a NetZlink {subject} is set in code";
            yield break;
        }

        bool map = IsMap(type);
        Type? element = map ? type.GetGenericArguments()[1] : ListElement(type);
        if (!string.IsNullOrEmpty(section.Value))
        {
            string wanted = map ? $"a map ({path}:name)" : element is not null ? $"a list ({path}:0, {path}:1 ...)" : $"a section ({string.Join(", ", Properties(type).Keys.Take(3).Select(k => $"{path}:{k}"))} ...)";
            yield return $"{path} is '{section.Value}': {path} is {wanted}, not a single value";
        }

        Dictionary<string, PropertyInfo>? known = element is null && !map ? Properties(type) : null;
        foreach (IConfigurationSection below in section.GetChildren())
        {
            string at = $"{path}:{below.Key}";
            if (known is not null)
            {
                if (known.TryGetValue(below.Key, out PropertyInfo? property))
                {
                    foreach (string problem in Below(below, at, property.PropertyType, subject))
                    {
                        yield return problem;
                    }
                }
                else
                {
                    yield return Unknown(at, subject);
                }
            }
            else if (!map && !int.TryParse(below.Key, NumberStyles.None, CultureInfo.InvariantCulture, out _))
            {
                yield return $"{at} is not a setting of a NetZlink {subject} ({path} is a list: {path}:0, {path}:1 ...)";
            }
            else
            {
                foreach (string problem in Below(below, at, element!, subject))
                {
                    yield return problem;
                }
            }
        }
    }

    // A value the binder cannot convert: outside a list it throws naming the key, but inside a list
    // (Services:0:Weight) it drops the whole entry without a word, so the check says it first.
    private static string? ConversionProblem(string value, Type type)
    {
        if (type == typeof(string) || type == typeof(byte[]))
        {
            return null; // byte[] (base64) is checked by the binder, which names the key
        }

        try
        {
            _ = TypeDescriptor.GetConverter(type).ConvertFromInvariantString(value);
            return null;
        }
        catch (Exception e) when (e is FormatException or ArgumentException or NotSupportedException or OverflowException || e.InnerException is FormatException or OverflowException)
        {
            return type.IsEnum ? $"not one of {string.Join(", ", Enum.GetNames(type))}"
                : type.GetField("MinValue") is { } min && type.GetField("MaxValue") is { } max && type != typeof(TimeSpan)
                    ? $"not {(type == typeof(double) || type == typeof(float) || type == typeof(decimal) ? "a number" : "a whole number")} from {Convert.ToString(min.GetValue(null), CultureInfo.InvariantCulture)} to {Convert.ToString(max.GetValue(null), CultureInfo.InvariantCulture)}"
                    : type == typeof(TimeSpan) ? "not a time span (hh:mm:ss[.fff])" : $"not a {type.Name}";
        }
    }

    private static string Unknown(string path, string subject) => $"{path} is not a setting of a NetZlink {subject} (misspelt? docs/hosting.md lists them)";

    private static bool IsMap(Type type) => type.IsGenericType && type.GetGenericTypeDefinition() is var d && (d == typeof(IDictionary<,>) || d == typeof(Dictionary<,>) || d == typeof(IReadOnlyDictionary<,>));

    private static Type? ListElement(Type type) =>
        type != typeof(string) && typeof(IEnumerable).IsAssignableFrom(type) && type.IsGenericType ? type.GetGenericArguments()[0] : null;

    private static Dictionary<string, PropertyInfo> Properties(Type type)
        => type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Where(p => p.GetIndexParameters().Length == 0).ToDictionary(p => p.Name, StringComparer.OrdinalIgnoreCase);
}

/// <summary>Runs <see cref="ConfigurationKeyCheck"/> when the host starts (ValidateOnStart), for the options named <paramref name="optionsName"/>.</summary>
internal sealed class ConfigurationKeyValidator<TOptions>(string optionsName, string keyPrefix, IConfiguration section, SectionShape shape) : IValidateOptions<TOptions>
    where TOptions : class
{
    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        if (!string.Equals(name ?? Options.DefaultName, optionsName, StringComparison.Ordinal))
        {
            return ValidateOptionsResult.Skip;
        }

        List<string> failures = [.. ConfigurationKeyCheck.Problems(section, keyPrefix, shape)];
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
