// --servers host:port,host:port,…: the echo servers a client spreads its connections over.
using System.Globalization;
using NetZlink.Stress.Scenarios;

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
            // host:port only: a scheme (and the path it may carry) is not a --servers entry.
            HostPort address = default;
            bool parsed = !entry.Contains("://", StringComparison.Ordinal) && HostPort.TryParse(entry, out address);
            string host = parsed ? address.Host : string.Empty;
            int port = address.Port;
            bool portOk = parsed && FlagRanges.Port.Contains(port);
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
