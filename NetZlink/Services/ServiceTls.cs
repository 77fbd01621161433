namespace NetZlink.Services;

/// <summary>The TLS settings of the services' sockets, as zlink applies them: a server certificate
/// and key on the side that binds (zlink's <c>*_set_tls_server</c>), a CA file, host name and
/// system trust on the side that connects (<c>*_set_tls_client</c>). They take effect on
/// <c>tls://</c> and <c>wss://</c> endpoints; other transports ignore them.</summary>
internal static class ServiceTls
{
    /// <summary>Refuses a certificate without its key (or the reverse) and files that are not there.</summary>
    public static void CheckServer(string? certificateFile, string? keyFile, string paramName)
    {
        if (certificateFile is null && keyFile is null)
        {
            return;
        }

        if (string.IsNullOrEmpty(certificateFile) || string.IsNullOrEmpty(keyFile))
        {
            throw new ArgumentException(
                $"a TLS server needs both TlsCertificateFile and TlsKeyFile; {(string.IsNullOrEmpty(certificateFile) ? "TlsCertificateFile" : "TlsKeyFile")} is missing", paramName);
        }

        MustExist(certificateFile, "TlsCertificateFile", paramName);
        MustExist(keyFile, "TlsKeyFile", paramName);
    }

    /// <summary>Refuses a host name or system trust without anything to verify against, and a CA file that is not there.</summary>
    public static void CheckClient(string? caFile, string? hostname, bool trustSystem, string paramName)
    {
        if (caFile is null && !trustSystem)
        {
            if (hostname is not null)
            {
                throw new ArgumentException("TlsHostname is set without TlsCaFile or TlsTrustSystem to verify the server against", paramName);
            }

            return;
        }

        if (caFile is not null)
        {
            MustExist(caFile, "TlsCaFile", paramName);
        }
    }

    public static bool ClientEnabled(string? caFile, bool trustSystem) => caFile is not null || trustSystem;

    public static void ApplyServer(ZlinkSocket socket, string? certificateFile, string? keyFile)
    {
        if (certificateFile is not null)
        {
            socket.SetOption(SocketOption.TlsCert, certificateFile);
            socket.SetOption(SocketOption.TlsKey, keyFile!);
        }
    }

    public static void ApplyClient(ZlinkSocket socket, string? caFile, string? hostname, bool trustSystem)
    {
        if (!ClientEnabled(caFile, trustSystem))
        {
            return;
        }

        if (caFile is not null)
        {
            socket.SetOption(SocketOption.TlsCa, caFile);
        }

        if (hostname is not null)
        {
            socket.SetOption(SocketOption.TlsHostname, hostname);
        }

        socket.SetOption(SocketOption.TlsTrustSystem, trustSystem ? 1 : 0);
    }

    private static void MustExist(string path, string what, string paramName)
    {
        if (!File.Exists(path))
        {
            throw new ArgumentException($"{what} {path} does not exist", paramName);
        }
    }
}
