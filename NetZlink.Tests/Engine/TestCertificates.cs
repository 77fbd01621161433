// Certificates for the tls:// tests, made at run time: a CA and a server certificate it signs
// (localhost, 127.0.0.1; or one that expired yesterday), written as PEM files into a temporary
// directory removed on Dispose.
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace NetZlink.Tests.Engine;

internal sealed class TestCertificates : IDisposable
{
    private readonly string _dir;

    private TestCertificates(string dir)
    {
        _dir = dir;
    }

    public string Ca => Path.Combine(_dir, "ca.pem");

    public string ServerCert => Path.Combine(_dir, "server.pem");

    public string ServerKey => Path.Combine(_dir, "server.key");

    /// <summary>A CA (named <paramref name="caName"/>) and a server certificate for localhost and 127.0.0.1, valid now or (<paramref name="expiredServer"/>) expired since yesterday.</summary>
    public static TestCertificates Create(bool expiredServer = false, string caName = "CN=NetZlink test CA")
    {
        string dir = Directory.CreateTempSubdirectory("netzlink-tls-").FullName;
        var certs = new TestCertificates(dir);
        using var caKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var caRequest = new CertificateRequest(caName, caKey, HashAlgorithmName.SHA256);
        caRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        caRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        DateTimeOffset now = DateTimeOffset.UtcNow;
        using X509Certificate2 ca = caRequest.CreateSelfSigned(now.AddDays(-3), now.AddDays(1));

        using var serverKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", serverKey, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        using X509Certificate2 server = expiredServer
            ? request.Create(ca, now.AddDays(-2), now.AddDays(-1), RandomNumberGenerator.GetBytes(8))
            : request.Create(ca, now.AddHours(-1), now.AddDays(1), RandomNumberGenerator.GetBytes(8));

        File.WriteAllText(certs.Ca, ca.ExportCertificatePem());
        File.WriteAllText(certs.ServerCert, server.ExportCertificatePem());
        File.WriteAllText(certs.ServerKey, serverKey.ExportPkcs8PrivateKeyPem());
        return certs;
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
