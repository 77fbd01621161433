// The dotnet stack's echo server over tls, ws and wss: the same listener as the plain server
// (ServerListener); each accepted socket, for tls and wss, wrapped in an SslStream that presents
// --tls-cert/--tls-key; for ws and wss the HTTP upgrade read and answered by hand
// (WebSocketHandshake: 101 for GET /, 404 for another path, 400 for anything malformed) and the
// connection then run by System.Net.WebSockets (WebSocket.CreateFromStream, server side, with
// keep-alive), its data frames read as one byte stream (WebSocketByteStream). One task per connection
// reads and writes back every byte in order (over ws each read's bytes as one binary frame). Unlike
// the tcp server (socket events, no task per connection) this is the ordinary async path: neither
// SslStream nor WebSocket has a socket-event form. Same wire contract as the netzlink server over
// tls:// and ws(s)://: TLS 1.2 or later, no client certificate asked, no subprotocol, no extension.
using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.Tls;
using NetZlink.Stress.WebSockets;

namespace NetZlink.Stress.DotnetStack;

/// <summary>An echo server over <see cref="SslStream"/> and/or <see cref="WebSocket"/> on plain .NET sockets.</summary>
internal sealed class DotnetStreamEchoServer : EchoServerBase
{
    private const int ReadBufferBytes = 64 * 1024;

    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<Socket, byte> _open = new();
    private X509Certificate2? _certificate;
    private Socket? _listener;
    private Task? _accepting;
    private long _refusedUpgrades;

    /// <summary>Creates the server; nothing is read or bound until <see cref="Start"/>.</summary>
    public DotnetStreamEchoServer(ScenarioSettings settings)
        : base(settings)
    {
    }

    /// <summary>Upgrades refused (400, 404), over the server's life.</summary>
    public long RefusedUpgrades => Interlocked.Read(ref _refusedUpgrades);

    public override long Connections => _open.Count;

    /// <summary>Loads the certificate and key (tls, wss), binds BindHost:Port and starts accepting.</summary>
    /// <exception cref="System.Security.Cryptography.CryptographicException">The certificate or key cannot be read or do not match.</exception>
    protected override int Bind()
    {
        if (TlsEngineSettings.UsesTls(Settings))
        {
            string certificate = Settings.TlsCertificateFile ?? throw new InvalidOperationException($"a {Settings.Transport} echo server needs --tls-cert");
            using X509Certificate2 pem = X509Certificate2.CreateFromPemFile(certificate, Settings.TlsKeyFile);

            // A PEM key is ephemeral; a PKCS#12 round trip gives the handshake a key it can use on every platform.
            _certificate = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), password: null);
        }

        Socket listener = ServerListener.Open(Settings);
        _listener = listener;
        _accepting = AcceptAsync(listener, _stop.Token);
        return ((IPEndPoint)listener.LocalEndPoint!).Port;
    }

    /// <summary>Stops accepting and closes every connection.</summary>
    protected override void Dispose(bool disposing)
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
            Stream stream = new NetworkStream(socket, ownsSocket: true);
            try
            {
                if (_certificate is not null)
                {
                    var tls = new SslStream(stream, leaveInnerStreamOpen: false);
                    stream = tls;
                    await tls.AuthenticateAsServerAsync(
                        new SslServerAuthenticationOptions { ServerCertificate = _certificate, ClientCertificateRequired = false }, stop).ConfigureAwait(false);
                }

                if (TlsEngineSettings.IsWebSocket(Settings))
                {
                    if (await WebSocketHandshake.AcceptAsync(stream, WebSocketHandshake.DefaultPath, stop).ConfigureAwait(false) is not { } ws)
                    {
                        Interlocked.Increment(ref _refusedUpgrades);
                        return;
                    }

                    stream = new WebSocketByteStream(ws);
                }

                await EchoAsync(stream, stop).ConfigureAwait(false);
            }
            finally
            {
                await stream.DisposeAsync().ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException
            or System.Security.Authentication.AuthenticationException or WebSocketException)
        {
            // The peer went away, failed its handshake, or the server is stopping: this connection ends.
        }
        catch (Exception e)
        {
            ReportFault(e);
        }
        finally
        {
            _open.TryRemove(socket, out _);
            socket.Dispose();
        }
    }

    private async Task EchoAsync(Stream stream, CancellationToken stop)
    {
        byte[] buffer = new byte[ReadBufferBytes];
        long reads = 0;
        while (true)
        {
            int read = await stream.ReadAsync(buffer, stop).ConfigureAwait(false);
            if (read == 0)
            {
                return;
            }

            bool timed = Times.Samples(reads++);
            long readAt = timed ? ServerTimes.Now() : 0;
            await stream.WriteAsync(buffer.AsMemory(0, read), stop).ConfigureAwait(false);
            if (timed)
            {
                Times.RecordSince(readAt);
            }
        }
    }
}
