// A TLS handshake that fails for a certificate says why, wherever .NET code hears of it: the
// engine's ConnectFailure (TlsError, TlsVerifyResult, and its text, which is what an application
// puts in its exception), the socket's TlsLastError/TlsLastVerifyResult, and the monitor's
// HandshakeFailed event (MonitorEvent.TlsFailure). Expired, wrong-host and unknown-CA certificates,
// each made by the test. Before, all three were a bare EACCES (13).
namespace NetZlink.Tests.Engine;

public sealed class TlsFailureReasonTests : EngineFixture
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    public static IEnumerable<TestCaseData> Cases()
    {
        yield return new TestCaseData("expired", "certificate has expired", 10).SetName("AnExpiredCertificate");
        yield return new TestCaseData("wrong-host", "hostname mismatch", 62).SetName("AWrongHostName");
        yield return new TestCaseData("unknown-ca", "unable to get local issuer certificate", 20).SetName("AnUnknownCa");
    }

    [RequiresStreamClient]
    [TestCaseSource(nameof(Cases))]
    [CancelAfter(60_000)]
    public async Task TheEngine_SaysWhyTheHandshakeFailed(string failure, string reason, int verifyResult)
    {
        RequireTls();
        using var certs = TestCertificates.Create(expiredServer: failure == "expired");
        using var other = TestCertificates.Create(caName: "CN=Another test CA"); // a CA the server's certificate does not name
        await using var server = new ServerEngine(new EngineOptions
        {
            Endpoints = ["tls://127.0.0.1:*"],
            Tls = new EngineTlsOptions { CertificateFile = certs.ServerCert, KeyFile = certs.ServerKey },
        });
        _ = server.StartChannel();
        await using var client = new ClientEngine(1, new EngineOptions
        {
            Endpoints = [server.BoundEndpoints[0]],
            ConnectRetries = 0,
            Tls = ClientTls(failure, certs, other),
        });
        EngineChannel channel = client.StartChannel();
        using var patience = new CancellationTokenSource(Patience);
        EngineEvent e = await channel.Reader.ReadAsync(patience.Token);
        Assert.That(e.Kind, Is.EqualTo(EngineEventKind.ConnectFailed), e.ToString());
        ConnectFailure f = e.Failure!.Value;
        var thrown = new IOException($"could not connect: {f}"); // README.md's client loop
        TestContext.Out.WriteLine(thrown.Message);
        Assert.Multiple(() =>
        {
            Assert.That(f.Errno, Is.EqualTo((int)ZlinkError.EACCES));
            Assert.That(f.TlsError, Is.EqualTo(reason));
            Assert.That(f.TlsVerifyResult, Is.EqualTo(verifyResult));
            Assert.That(thrown.Message, Does.Contain($"TLS: {reason} (X509 verify result {verifyResult})").And.Contain("EACCES (13)"));
        });
    }

    [RequiresStreamClient]
    [TestCaseSource(nameof(Cases))]
    [CancelAfter(60_000)]
    public void TheSocketAndItsMonitor_SayWhyTheHandshakeFailed(string failure, string reason, int verifyResult)
    {
        RequireTls();
        using var certs = TestCertificates.Create(expiredServer: failure == "expired");
        using var other = TestCertificates.Create(caName: "CN=Another test CA"); // a CA the server's certificate does not name
        using var context = new ZlinkContext();
        using var server = context.CreateSocket(ZlinkSocketType.Stream);
        server.SetOption(SocketOption.TlsCert, certs.ServerCert);
        server.SetOption(SocketOption.TlsKey, certs.ServerKey);
        server.Bind("tls://127.0.0.1:*");
        using var client = context.CreateSocket(ZlinkSocketType.Stream);
        EngineTlsOptions tls = ClientTls(failure, certs, other);
        client.SetOption(SocketOption.TlsCa, tls.CaFile!);
        if (tls.Hostname is not null)
        {
            client.SetOption(SocketOption.TlsHostname, tls.Hostname);
        }

        Assert.That(client.TlsLastError, Is.Empty, "no failure yet");
        using var monitor = client.OpenMonitor(MonitorEvents.HandshakeFailedAuth);
        client.Connect(server.LastEndpoint);

        // STREAM sockets make progress only inside calls on them: pump both until the event comes.
        MonitorEvent failed = default;
        Wait.Until(() =>
        {
            _ = server.TryReceive(new byte[64], out _);
            _ = client.TryReceive(new byte[64], out _);
            return monitor.TryReceive(out failed);
        }, "the client's HandshakeFailedAuth event", Patience);

        Assert.Multiple(() =>
        {
            Assert.That(failed.EventType, Is.EqualTo(MonitorEvents.HandshakeFailedAuth));
            Assert.That(failed.Value, Is.EqualTo((ulong)ZlinkError.EACCES));
            Assert.That(failed.TlsFailure, Is.EqualTo($"TLS: {reason} (X509 verify result {verifyResult})"));
            Assert.That(failed.ToString(), Does.EndWith($"TLS: {reason} (X509 verify result {verifyResult})"));
            Assert.That(client.TlsLastError, Is.EqualTo(reason));
            Assert.That(client.TlsLastVerifyResult, Is.EqualTo(verifyResult));
        });
    }

    // The properties were refused on every type but STREAM (InvalidOperationException), though
    // the library keeps the reason for the ZMP socket types too; and after Dispose they said the
    // same instead of ObjectDisposedException.
    [TestCaseSource(nameof(Cases))]
    [CancelAfter(60_000)]
    public void APairSaysWhyItsTlsHandshakeFailed_AndIsDisposedLikeAnyOtherCall(string failure, string reason, int verifyResult)
    {
        RequireTls();
        using var certs = TestCertificates.Create(expiredServer: failure == "expired");
        using var other = TestCertificates.Create(caName: "CN=Another test CA");
        using var context = new ZlinkContext();
        using var server = context.CreateSocket(ZlinkSocketType.Pair);
        server.SetOption(SocketOption.TlsCert, certs.ServerCert);
        server.SetOption(SocketOption.TlsKey, certs.ServerKey);
        server.Bind("tls://127.0.0.1:*");
        var client = context.CreateSocket(ZlinkSocketType.Pair);
        EngineTlsOptions tls = ClientTls(failure, certs, other);
        client.SetOption(SocketOption.TlsCa, tls.CaFile!);
        if (tls.Hostname is not null)
        {
            client.SetOption(SocketOption.TlsHostname, tls.Hostname);
        }

        Assert.That(client.TlsLastError, Is.Empty, "no failure yet");
        using (var monitor = client.OpenMonitor(MonitorEvents.HandshakeFailedNoDetail | MonitorEvents.HandshakeFailedAuth))
        {
            client.Connect(server.LastEndpoint);
            MonitorEvent failed = default;
            Wait.Until(() => monitor.TryReceive(out failed), "the client's failed handshake event", Patience);
            Assert.Multiple(() =>
            {
                Assert.That(failed.Value, Is.EqualTo((ulong)ZlinkError.EACCES));
                Assert.That(client.TlsLastError, Is.EqualTo(reason));
                Assert.That(client.TlsLastVerifyResult, Is.EqualTo(verifyResult));
            });
        }

        client.Dispose();
        Assert.Throws<ObjectDisposedException>(() => _ = client.TlsLastError);
        Assert.Throws<ObjectDisposedException>(() => _ = client.TlsLastVerifyResult);
    }

    private static EngineTlsOptions ClientTls(string failure, TestCertificates certs, TestCertificates other) => failure switch
    {
        "expired" => new EngineTlsOptions { CaFile = certs.Ca, Hostname = "localhost" },
        "wrong-host" => new EngineTlsOptions { CaFile = certs.Ca, Hostname = "wrong.example" },
        _ => new EngineTlsOptions { CaFile = other.Ca, Hostname = "localhost" },
    };

    private static void RequireTls()
    {
        if (!ZlinkLibrary.Has("tls"))
        {
            Assert.Ignore("the native library has no TLS (zlink_has(\"tls\") is 0)");
        }
    }
}
