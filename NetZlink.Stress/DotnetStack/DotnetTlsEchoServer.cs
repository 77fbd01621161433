// The dotnet stack's echo server over tls: the same listener as the plain server (ServerListener),
// each accepted socket wrapped in an SslStream that presents --tls-cert/--tls-key, and one task per
// connection that reads and writes back every byte in order. Unlike the tcp server (socket events,
// no task per connection) this is the ordinary async path: SslStream has no socket-event form.
// Same wire contract as the netzlink server over tls://: TLS 1.2 or later, no client certificate asked.
using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

// Inside NetZlink.*, NetZlink.Socket would shadow System.Net.Sockets.Socket.
using Socket = System.Net.Sockets.Socket;

/// <summary>An echo server over <see cref="SslStream"/> on plain .NET sockets.</summary>
internal sealed class DotnetTlsEchoServer : IEchoServer
{
    private const int ReadBufferBytes = 64 * 1024;

    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<Socket, byte> _open = new();
    private X509Certificate2? _certificate;
    private Socket? _listener;
    private Task? _accepting;
    private Exception? _fault;

    /// <summary>Creates the server; nothing is read or bound until <see cref="Start"/>.</summary>
    public DotnetTlsEchoServer(ScenarioSettings settings)
    {
        Settings = settings ?? throw new ArgumentNullException(nameof(settings));
        Times = new ServerTimes(settings.LatencySampleRate);
    }

    public ScenarioSettings Settings { get; }

    public int Port { get; private set; }

    public long Connections => _open.Count;

    public Exception? Fault => Volatile.Read(ref _fault);

    /// <summary>Receive-to-send times: every --latency-sample-rate-th read of a connection.</summary>
    public ServerTimes Times { get; }

    ServerTimes? IEchoServer.Times => Times;

    /// <summary>Loads the certificate and key, binds BindHost:Port and starts accepting.</summary>
    /// <exception cref="System.Security.Cryptography.CryptographicException">The certificate or key cannot be read or do not match.</exception>
    public void Start()
    {
        if (_listener is not null)
        {
            throw new InvalidOperationException("The echo server is already started.");
        }

        string certificate = Settings.TlsCertificateFile ?? throw new InvalidOperationException("a tls echo server needs --tls-cert");
        using (X509Certificate2 pem = X509Certificate2.CreateFromPemFile(certificate, Settings.TlsKeyFile))
        {
            // A PEM key is ephemeral; a PKCS#12 round trip gives the handshake a key it can use on every platform.
            _certificate = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), password: null);
        }

        Platform.DescriptorLimit.RaiseSoftToHard();
        Socket listener = ServerListener.Open(Settings);
        Port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        _listener = listener;
        _accepting = AcceptAsync(listener, _stop.Token);
    }

    /// <summary>Stops accepting and closes every connection.</summary>
    public void Dispose()
    {
        _stop.Cancel();
        _listener?.Dispose();
        foreach (Socket socket in _open.Keys)
        {
            socket.Dispose();
        }

        try
        {
            _accepting?.Wait(TimeSpan.FromSeconds(5));
        }
        catch (AggregateException)
        {
        }

        _certificate?.Dispose();
        _stop.Dispose();
    }

    private async Task AcceptAsync(Socket listener, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await listener.AcceptAsync(stop).ConfigureAwait(false);
            }
            catch (Exception e) when (stop.IsCancellationRequested || e is ObjectDisposedException)
            {
                return;
            }
            catch (SocketException)
            {
                // A connection that went away before it was accepted (ECONNABORTED): keep accepting.
                continue;
            }

            _open[socket] = 0;
            _ = Task.Run(() => ServeAsync(socket, stop), CancellationToken.None);
        }
    }

    private async Task ServeAsync(Socket socket, CancellationToken stop)
    {
        try
        {
            socket.NoDelay = true;
            var network = new NetworkStream(socket, ownsSocket: true);
            await using (network.ConfigureAwait(false))
            {
                var tls = new SslStream(network, leaveInnerStreamOpen: false);
                await using (tls.ConfigureAwait(false))
                {
                    await tls.AuthenticateAsServerAsync(
                        new SslServerAuthenticationOptions { ServerCertificate = _certificate, ClientCertificateRequired = false }, stop).ConfigureAwait(false);
                    await EchoAsync(tls, stop).ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException
            or System.Security.Authentication.AuthenticationException)
        {
            // The peer went away, failed its handshake, or the server is stopping: this connection ends.
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _fault, e, null);
        }
        finally
        {
            _open.TryRemove(socket, out _);
            socket.Dispose();
        }
    }

    private async Task EchoAsync(SslStream tls, CancellationToken stop)
    {
        byte[] buffer = new byte[ReadBufferBytes];
        long reads = 0;
        while (true)
        {
            int read = await tls.ReadAsync(buffer, stop).ConfigureAwait(false);
            if (read == 0)
            {
                return;
            }

            bool timed = Times.Samples(reads++);
            long readAt = timed ? ServerTimes.Now() : 0;
            await tls.WriteAsync(buffer.AsMemory(0, read), stop).ConfigureAwait(false);
            if (timed)
            {
                Times.RecordSince(readAt);
            }
        }
    }
}
