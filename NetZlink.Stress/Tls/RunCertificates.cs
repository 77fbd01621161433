// The throwaway certificates of a tls run with --role both: a CA made for this run and a server
// certificate it signs (names: localhost, this machine's name, 127.0.0.1 and ::1), as PEM files in
// a fresh temporary directory that Dispose removes. The server child gets the certificate and key
// paths (--tls-cert, --tls-key), the client the CA (--tls-ca); nothing outside the directory trusts the CA.
// NetZlink.Tests compiles this file too (its TestCertificates): one certificate maker for both,
// with the test's options (another CA name, a server certificate that has expired).
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace NetZlink.Stress.Tls;

/// <summary>A run's CA, server certificate and server key as PEM files; Dispose deletes them.</summary>
internal sealed class RunCertificates : IDisposable
{
    private const string DirectoryPrefix = "netzlink-stress-tls-";

    /// <summary>The CA's name unless the caller names it.</summary>
    public const string DefaultCaName = "CN=NetZlink.Stress run CA";

    private RunCertificates(string directory)
    {
        Directory = directory;
    }

    /// <summary>The temporary directory that holds the three files.</summary>
    public string Directory { get; }

    /// <summary>The CA certificate the client verifies the server against.</summary>
    public string CaFile => Path.Combine(Directory, "ca.pem");

    /// <summary>The server's certificate, signed by the CA.</summary>
    public string CertificateFile => Path.Combine(Directory, "server.pem");

    /// <summary>The server certificate's private key (PKCS#8, not encrypted).</summary>
    public string KeyFile => Path.Combine(Directory, "server.key");

    /// <summary>
    /// Makes the CA (named <paramref name="caName"/>) and the server certificate (valid from an hour
    /// ago for a day; with <paramref name="expiredServer"/>, expired since yesterday) and writes them.
    /// </summary>
    public static RunCertificates Create(string caName = DefaultCaName, bool expiredServer = false)
    {
        string directory = System.IO.Directory.CreateTempSubdirectory(DirectoryPrefix).FullName;
        var files = new RunCertificates(directory);
        try
        {
            files.Write(caName, expiredServer);
            return files;
        }
        catch
        {
            files.Dispose();
            throw;
        }
    }

    /// <summary>Removes the directory and the files in it.</summary>
    public void Dispose()
    {
        if (System.IO.Directory.Exists(Directory))
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
    }

    private void Write(string caName, bool expiredServer)
    {
        DateTimeOffset now = DateTimeOffset.UtcNow;
        DateTimeOffset from = expiredServer ? now.AddDays(-2) : now.AddHours(-1);
        DateTimeOffset until = expiredServer ? now.AddDays(-1) : from.AddDays(1);

        using var caKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var caRequest = new CertificateRequest(caName, caKey, HashAlgorithmName.SHA256);
        caRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: true, pathLengthConstraint: 0, critical: true));
        caRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        // The CA covers the server certificate's whole validity and is valid now (an expired server's too).
        using X509Certificate2 ca = caRequest.CreateSelfSigned(from, now.AddDays(1));

        using var serverKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", serverKey, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        if (Uri.CheckHostName(Environment.MachineName) == UriHostNameType.Dns && Environment.MachineName != "localhost")
        {
            names.AddDnsName(Environment.MachineName);
        }

        names.AddIpAddress(IPAddress.Loopback);
        names.AddIpAddress(IPAddress.IPv6Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        using X509Certificate2 server = request.Create(ca, from, until, RandomNumberGenerator.GetBytes(12));

        File.WriteAllText(CaFile, ca.ExportCertificatePem());
        File.WriteAllText(CertificateFile, server.ExportCertificatePem());
        File.WriteAllText(KeyFile, serverKey.ExportPkcs8PrivateKeyPem());
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(KeyFile, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
    }
}
