// What the server role needs from an echo server, whichever stack it runs on.
using NetZlink.Stress.Latency;

namespace NetZlink.Stress.Scenarios;

/// <summary>An echo server: netzlink's <see cref="EchoServer"/> or the plain .NET one.</summary>
internal interface IEchoServer : IDisposable
{
    /// <summary>The port actually bound (useful with Port 0).</summary>
    int Port { get; }

    /// <summary>Connections currently open.</summary>
    long Connections { get; }

    /// <summary>Its receive-to-send times (Latency/ServerTimes); null for a server that keeps none (the fault server).</summary>
    ServerTimes? Times { get; }

    /// <summary>The exception the server died of, if any.</summary>
    Exception? Fault { get; }

    /// <summary>Binds and starts serving; throws when it cannot bind (e.g. the port is in use).</summary>
    void Start();
}
