// What a tls or wss run sets on the netzlink engines: the server binds tls:// (wss://) with its
// certificate and key, the client connects and verifies the server's chain against the CA file and,
// when it dials one host, that host's name or address against the certificate. tcp and ws set nothing.
using NetZlink.Engine;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Tls;

/// <summary>The <see cref="EngineTlsOptions"/> of a run's server and client.</summary>
internal static class TlsEngineSettings
{
    /// <summary>The transport name of plain TLS.</summary>
    public const string Transport = "tls";

    /// <summary>The transport name of WebSocket without TLS.</summary>
    public const string WebSocket = "ws";

    /// <summary>The transport name of WebSocket over TLS.</summary>
    public const string SecureWebSocket = "wss";

    /// <summary>Whether <paramref name="transport"/> runs over TLS (tls, wss): it takes certificates.</summary>
    public static bool UsesTls(string transport) => transport is Transport or SecureWebSocket;

    /// <summary>Whether <paramref name="settings"/> runs over TLS (tls, wss): it takes certificates.</summary>
    public static bool UsesTls(ScenarioSettings settings) => UsesTls(settings.Transport);

    /// <summary>Whether <paramref name="settings"/> runs over WebSocket (ws, wss).</summary>
    public static bool IsWebSocket(ScenarioSettings settings) => settings.Transport is WebSocket or SecureWebSocket;

    /// <summary>The echo server's: its certificate and key (--tls-cert, --tls-key); null when the run is not tls or wss.</summary>
    public static EngineTlsOptions? Server(ScenarioSettings settings) => UsesTls(settings)
        ? new EngineTlsOptions { CertificateFile = settings.TlsCertificateFile, KeyFile = settings.TlsKeyFile }
        : null;

    /// <summary>
    /// The client's: verify on, against --tls-ca; the name checked is --host (an address is checked
    /// against the certificate's IP names), or, with a --servers list, none (the chain only); null when the run is not tls or wss.
    /// </summary>
    public static EngineTlsOptions? Client(ScenarioSettings settings) => UsesTls(settings)
        ? new EngineTlsOptions
        {
            CaFile = settings.TlsCaFile,
            Verify = true,
            Hostname = settings.Servers.Count == 0 ? settings.Host.Trim('[', ']') : null,
        }
        : null;
}
