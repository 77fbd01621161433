// --servers host:port,host:port,…: the echo servers a client spreads its connections over.
using System.Globalization;

namespace NetZlink.Stress.Cli;

/// <summary>Reads and checks a --servers list.</summary>
internal static class ServerList
{
    /// <summary>The entries as "host:port" (an IPv6 host in brackets), or the problems found.</summary>
    public static IReadOnlyList<string> Parse(string text, List<string> errors)
    {
        var servers = new List<string>();
        foreach (string raw in text.Split(','))
        {
            string entry = raw.Trim();
            int colon = entry.LastIndexOf(':');
            string host = colon > 0 ? entry[..colon] : string.Empty;
            bool portOk = int.TryParse(colon > 0 ? entry[(colon + 1)..] : string.Empty, NumberStyles.None, CultureInfo.InvariantCulture, out int port)
                && FlagRanges.Port.Contains(port);
            bool bareIpv6 = host.Contains(':', StringComparison.Ordinal) && !(host.StartsWith('[') && host.EndsWith(']'));
            if (host.Length == 0 || !portOk || bareIpv6 || host.Any(c => char.IsWhiteSpace(c) || c == ';'))
            {
                errors.Add($"--servers takes host:port entries joined by commas, each port 1..65535 and an IPv6 host in brackets (got '{entry}' in '{text}')");
                continue;
            }

            servers.Add(string.Create(CultureInfo.InvariantCulture, $"{host}:{port}"));
        }

        foreach (IGrouping<string, string> twice in servers.GroupBy(s => s, StringComparer.OrdinalIgnoreCase).Where(g => g.Count() > 1))
        {
            errors.Add($"--servers names {twice.Key} {twice.Count()} times: each server once");
        }

        return servers;
    }
}
