// TLS settings of an engine's STREAM sockets, for tls:// and wss:// endpoints: each maps to one of zlink's
// TLS socket options (TLS_CERT 95 ... TLS_PASSWORD 102), set on every shard's socket before it binds
// or connects.
namespace NetZlink.Engine;

/// <summary>TLS settings for an engine whose endpoints are <c>tls://</c> or <c>wss://</c> (needs a native library with TLS: <see cref="ZlinkLibrary.Has(string)"/> "tls"; wss also "ws").</summary>
public sealed class EngineTlsOptions
{
    /// <summary>PEM certificate (chain) file: required on a server, optional on a client (its client certificate).</summary>
    public string? CertificateFile { get; set; }

    /// <summary>PEM private key file of <see cref="CertificateFile"/>; null: the key is in the certificate's file.</summary>
    public string? KeyFile { get; set; }

    /// <summary>Passphrase of an encrypted <see cref="KeyFile"/>.</summary>
    public string? KeyPassword { get; set; }

    /// <summary>PEM file of the CAs that peers' certificates are verified against.</summary>
    public string? CaFile { get; set; }

    /// <summary>Also trust the system's CA store.</summary>
    public bool TrustSystem { get; set; }

    /// <summary>Clients: verify the server's certificate (default true; then <see cref="CaFile"/> or <see cref="TrustSystem"/> is needed).</summary>
    public bool Verify { get; set; } = true;

    /// <summary>Clients: the name sent as SNI and checked against the server's certificate (an address is checked against its IP names).</summary>
    public string? Hostname { get; set; }

    /// <summary>Servers: require and verify a client certificate (against <see cref="CaFile"/> / <see cref="TrustSystem"/>).</summary>
    public bool RequireClientCertificate { get; set; }

    /// <summary>A copy for an engine's snapshot of its options (every setting is a string or a flag).</summary>
    internal EngineTlsOptions Copy() => (EngineTlsOptions)MemberwiseClone();
}
