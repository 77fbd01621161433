// What every echo server of the server role shares, whichever stack serves: the settings, the
// receive-to-send times (Latency/ServerTimes), the port actually bound, the fault the server died
// of, and Start: refused twice, the descriptor limit raised, then the stack's own Bind. The
// netzlink EchoServer (with its slow-consumer bound), the dotnet socket server and the dotnet
// stream server (tls, ws, wss) derive from it.
using NetZlink.Stress.Latency;

namespace NetZlink.Stress.Scenarios;

/// <summary>An echo server: binds in <see cref="Bind"/>, serves until disposed.</summary>
public abstract class EchoServerBase : IEchoServer
{
    private Exception? _fault;
    private bool _started;

    /// <summary>Creates the server; nothing is bound until <see cref="Start"/>.</summary>
    protected EchoServerBase(ScenarioSettings settings)
    {
        Settings = settings ?? throw new ArgumentNullException(nameof(settings));
        Times = new ServerTimes(settings.LatencySampleRate);
    }

    /// <summary>The settings it was created with (BindHost, Port, Backlog, Hwm, buffers, TLS files).</summary>
    public ScenarioSettings Settings { get; }

    /// <summary>The port actually bound (useful with Port 0).</summary>
    public int Port { get; private set; }

    /// <summary>Connections currently open.</summary>
    public abstract long Connections { get; }

    /// <summary>The exception the server died of, if any.</summary>
    public virtual Exception? Fault => Volatile.Read(ref _fault);

    /// <summary>Its receive-to-send times: every --latency-sample-rate-th packet or read of a connection.</summary>
    internal ServerTimes Times { get; }

    ServerTimes? IEchoServer.Times => Times;

    /// <summary>Binds and starts serving; throws when it cannot bind (e.g. the port is in use), and when started already.</summary>
    public void Start()
    {
        if (_started)
        {
            throw new InvalidOperationException("The echo server is already started.");
        }

        Platform.DescriptorLimit.RaiseSoftToHard();
        Port = Bind();
        _started = true;
    }

    /// <summary>Stops serving and closes every connection.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Binds BindHost:Port and starts serving; returns the port bound.</summary>
    protected abstract int Bind();

    /// <summary>Stops serving and closes every connection.</summary>
    protected abstract void Dispose(bool disposing);

    /// <summary>Keeps the first exception the server dies of (see <see cref="Fault"/>).</summary>
    internal void ReportFault(Exception e) => Interlocked.CompareExchange(ref _fault, e, null);
}
