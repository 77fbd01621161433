// Certificates for the tls:// tests, made at run time: a CA and a server certificate it signs
// (localhost, 127.0.0.1; or one that expired yesterday), written as PEM files into a temporary
// directory removed on Dispose. Made by the stress tool's RunCertificates (compiled into this
// project too), so the two test suites share one certificate maker.
using NetZlink.Stress.Tls;

namespace NetZlink.Tests.Engine;

internal sealed class TestCertificates : IDisposable
{
    private readonly RunCertificates _files;

    private TestCertificates(RunCertificates files)
    {
        _files = files;
    }

    public string Ca => _files.CaFile;

    public string ServerCert => _files.CertificateFile;

    public string ServerKey => _files.KeyFile;

    /// <summary>A CA (named <paramref name="caName"/>) and a server certificate for localhost and 127.0.0.1, valid now or (<paramref name="expiredServer"/>) expired since yesterday.</summary>
    public static TestCertificates Create(bool expiredServer = false, string caName = "CN=NetZlink test CA") =>
        new(RunCertificates.Create(caName, expiredServer));

    public void Dispose() => _files.Dispose();
}
