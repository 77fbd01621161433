// The checks on --tls-cert, --tls-key and --tls-ca: existing files, given where a tls or wss run
// needs them, and not given where nothing reads them (tcp, ws).
namespace NetZlink.Stress.Cli;

/// <summary>Adds the TLS flags' problems to a validation's list.</summary>
internal static class TlsFlagRules
{
    /// <summary>Checks the TLS flags of <paramref name="o"/> against its role, scenario and transport.</summary>
    public static void Check(List<string> errors, StressOptions o)
    {
        ExistingFile(errors, "--tls-cert", o.TlsCert);
        ExistingFile(errors, "--tls-key", o.TlsKey);
        ExistingFile(errors, "--tls-ca", o.TlsCa);

        string role = o.Role.ToLowerInvariant();
        bool s4 = string.Equals(o.Scenario, "s4", StringComparison.OrdinalIgnoreCase);
        string transport = o.Transport.ToLowerInvariant();
        bool tls = Tls.TlsEngineSettings.UsesTls(transport);
        bool anyGiven = o.TlsCert is not null || o.TlsKey is not null || o.TlsCa is not null;
        if (anyGiven && !tls && !s4)
        {
            errors.Add($"--tls-cert, --tls-key and --tls-ca are for --transport tls or wss or --scenario s4, not --transport {transport}");
            return;
        }

        if (o.TlsKey is not null && o.TlsCert is null)
        {
            errors.Add("--tls-key is the key of --tls-cert: give --tls-cert too");
        }

        switch (role)
        {
            case "server" when tls && o.TlsCert is null:
                errors.Add($"--role server --transport {transport} needs --tls-cert (the server's PEM certificate) and, unless the key is in that file, --tls-key");
                break;
            case "client" when tls && !s4 && o.TlsCa is null:
                errors.Add($"--role client --transport {transport} needs --tls-ca (the PEM CA file the server's certificate is verified against)");
                break;
            case "both" when (o.TlsCert is null) != (o.TlsCa is null):
                errors.Add("--role both: give --tls-cert and --tls-ca together, or neither (then every tls or wss run makes its own CA and server certificate)");
                break;
        }
    }

    private static void ExistingFile(List<string> errors, string flag, string? path)
    {
        if (path is null)
        {
            return;
        }

        if (string.IsNullOrWhiteSpace(path))
        {
            errors.Add($"{flag} needs a file path");
        }
        else if (Directory.Exists(path))
        {
            errors.Add($"{flag} {path}: is a directory, not a PEM file");
        }
        else if (!File.Exists(path))
        {
            errors.Add($"{flag} {path}: no such file");
        }
    }
}
