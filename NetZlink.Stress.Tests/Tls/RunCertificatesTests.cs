// The per-run certificates: a CA that signs a server certificate for the loopback names, a key
// that matches it, and nothing left on disk after Dispose.
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace NetZlink.Stress.Tests.Tls;

[TestFixture]
public sealed class RunCertificatesTests
{
    [Test]
    [CancelAfter(30_000)]
    public void TheCaSignsAServerCertificateForLoopbackAndDisposeRemovesThem()
    {
        string directory;
        using (RunCertificates files = RunCertificates.Create())
        {
            directory = files.Directory;
            using X509Certificate2 ca = X509CertificateLoader.LoadCertificateFromFile(files.CaFile);
            using X509Certificate2 server = X509CertificateLoader.LoadCertificateFromFile(files.CertificateFile);
            using var key = ECDsa.Create();
            key.ImportFromPem(File.ReadAllText(files.KeyFile));
            using ECDsa? certificateKey = server.GetECDsaPublicKey();
            using var chain = new X509Chain();
            chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.Add(ca);
            chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;

            Assert.Multiple(() =>
            {
                Assert.That(certificateKey?.ExportSubjectPublicKeyInfo(), Is.EqualTo(key.ExportSubjectPublicKeyInfo()), "the key file does not match the certificate");
                Assert.That(chain.Build(server), Is.True, string.Join("; ", chain.ChainStatus.Select(s => s.StatusInformation)));
                Assert.That(server.MatchesHostname("localhost"), Is.True);
                Assert.That(server.MatchesHostname(IPAddress.Loopback.ToString()), Is.True);
                Assert.That(server.MatchesHostname("[::1]"), Is.True);
                Assert.That(server.MatchesHostname("example.com"), Is.False);
                Assert.That(server.Issuer, Is.EqualTo(ca.Subject));
            });
        }

        Assert.That(Directory.Exists(directory), Is.False, "the certificate directory outlived Dispose");
    }

    [Test]
    [CancelAfter(30_000)]
    public void EveryRunGetsItsOwnCa()
    {
        using RunCertificates first = RunCertificates.Create();
        using RunCertificates second = RunCertificates.Create();

        Assert.Multiple(() =>
        {
            Assert.That(first.Directory, Is.Not.EqualTo(second.Directory));
            Assert.That(File.ReadAllText(first.CaFile), Is.Not.EqualTo(File.ReadAllText(second.CaFile)));
        });
    }
}
