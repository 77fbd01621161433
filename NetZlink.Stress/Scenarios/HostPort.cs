// The one place the stress tool splits an endpoint into host and port: "host:port" (an IPv6 host
// in brackets) or "scheme://host:port" with an optional path after it, as endpoints come back from
// a library: a real zlink reports a bound ws endpoint as ws://127.0.0.1:27750/ (trailing slash).
using System.Globalization;

namespace NetZlink.Stress.Scenarios;

/// <summary>The host and port of an endpoint.</summary>
/// <param name="Host">As written (an IPv6 address keeps its brackets).</param>
/// <param name="Port">The port number (not range-checked).</param>
internal readonly record struct HostPort(string Host, int Port)
{
    /// <summary>The host without the brackets of an IPv6 address.</summary>
    public string BareHost => Host.Length >= 2 && Host[0] == '[' && Host[^1] == ']' ? Host[1..^1] : Host;

    /// <summary>
    /// Splits <c>host:port</c> or <c>scheme://host:port[/path]</c>; false when there is no host, no
    /// port, or the port is not a plain decimal number. A path is taken only after a scheme.
    /// </summary>
    public static bool TryParse(string text, out HostPort value)
    {
        value = default;
        string address = text;
        int scheme = address.IndexOf("://", StringComparison.Ordinal);
        if (scheme >= 0)
        {
            address = address[(scheme + 3)..];
            int slash = address.IndexOf('/');
            if (slash >= 0)
            {
                address = address[..slash];
            }
        }

        int colon = address.LastIndexOf(':');
        if (colon <= 0 || !int.TryParse(address.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int port))
        {
            return false;
        }

        value = new HostPort(address[..colon], port);
        return true;
    }

    /// <summary>Like <see cref="TryParse"/>, throwing for text that is not an endpoint.</summary>
    /// <exception cref="FormatException">Not <c>[scheme://]host:port[/path]</c>.</exception>
    public static HostPort Parse(string text)
        => TryParse(text, out HostPort value)
            ? value
            : throw new FormatException($"'{text}' is not an endpoint of the form host:port or scheme://host:port[/path]");
}
