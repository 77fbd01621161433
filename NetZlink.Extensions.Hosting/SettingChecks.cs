// The checks of single settings that several hosted kinds share (gateways, receivers, sockets):
// endpoints, service names, time spans. Each returns null when the value is good, else the rest
// of a failure line ("is 'udp://x': ...") that the caller prefixes with the configuration key.
using System.Globalization;
using System.Text;
using Microsoft.Extensions.Options;

namespace NetZlink.Extensions.Hosting;

internal static class SettingChecks
{
    /// <summary>A service name, an endpoint, a routing id: at most 255 bytes on the wire (zlink's service protocol).</summary>
    public const int MaxTextBytes = 255;

    /// <summary>The transports of zlink's socket types (docs/zlink-abi.md#endpoints-and-transports).</summary>
    private static readonly string[] Schemes = ["tcp://", "ipc://", "inproc://", "tls://", "ws://", "wss://"];

    /// <summary>Null when <paramref name="endpoint"/> names a transport zlink's sockets have, else what is wrong.</summary>
    /// <param name="endpoint">The endpoint.</param>
    /// <param name="what">What it is, for the line: "a registry's publish endpoint".</param>
    public static string? EndpointProblem(string? endpoint, string what)
    {
        endpoint ??= string.Empty;
        bool known = Schemes.Any(s => endpoint.StartsWith(s, StringComparison.Ordinal) && endpoint.Length > s.Length);
        return known ? null : $"is '{endpoint}': {what} is tcp://host:port, ipc://path, inproc://name, tls://host:port, ws://host:port[/path] or wss://host:port[/path]";
    }

    /// <summary>Null when <paramref name="service"/> is a name the service protocol carries (ZlinkReceiver.CheckText's rules), else what is wrong.</summary>
    public static string? ServiceNameProblem(string? service)
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

    public static string? Positive(TimeSpan value) => value > TimeSpan.Zero ? null : $"must be positive (is {value:c})";

    public static string? NotNegative(TimeSpan value) => value >= TimeSpan.Zero ? null : $"must not be negative (is {value:c})";

    /// <summary>Null when <paramref name="path"/> is an existing file, else the line's rest.</summary>
    public static string? FileProblem(string path) => File.Exists(path) ? null : $"is '{path}': no such file";
}

/// <summary>
/// Checks the options named <paramref name="optionsName"/> when the host starts (ValidateOnStart): each
/// problem <paramref name="problems"/> yields (a key and the rest of its line, or null for a good key)
/// is one failure line, prefixed with the section's path.
/// </summary>
internal sealed class SettingsValidator<TOptions>(string optionsName, string keyPrefix, Func<TOptions, IEnumerable<(string Key, string? Problem)>> problems) : IValidateOptions<TOptions>
    where TOptions : class
{
    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        if (!string.Equals(name ?? Options.DefaultName, optionsName, StringComparison.Ordinal))
        {
            return ValidateOptionsResult.Skip;
        }

        List<string> failures = [.. problems(options).Where(p => p.Problem is not null).Select(p => $"{keyPrefix}{p.Key} {p.Problem}")];
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
