// What a tls run sets on the netzlink engines: the server binds tls:// with its certificate and key,
// the client connects tls:// and verifies the server's chain against the CA file and, when it dials
// one host, that host's name or address against the certificate. Other transports set nothing.
using NetZlink.Engine;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Tls;

/// <summary>The <see cref="EngineTlsOptions"/> of a run's server and client.</summary>
internal static class TlsEngineSettings
{
    /// <summary>The transport name that takes TLS settings.</summary>
    public const string Transport = "tls";

    /// <summary>Whether <paramref name="settings"/> runs over tls.</summary>
    public static bool IsTls(ScenarioSettings settings) => settings.Transport == Transport;

    /// <summary>The echo server's: its certificate and key (--tls-cert, --tls-key); null when the run is not tls.</summary>
    public static EngineTlsOptions? Server(ScenarioSettings settings) => IsTls(settings)
        ? new EngineTlsOptions { CertificateFile = settings.TlsCertificateFile, KeyFile = settings.TlsKeyFile }
        : null;

    /// <summary>
    /// The client's: verify on, against --tls-ca; the name checked is --host (an address is checked
    /// against the certificate's IP names), or, with a --servers list, none (the chain only); null when the run is not tls.
    /// </summary>
    public static EngineTlsOptions? Client(ScenarioSettings settings) => IsTls(settings)
        ? new EngineTlsOptions
        {
            CaFile = settings.TlsCaFile,
            Verify = true,
            Hostname = settings.Servers.Count == 0 ? settings.Host.Trim('[', ']') : null,
        }
        : null;
}
