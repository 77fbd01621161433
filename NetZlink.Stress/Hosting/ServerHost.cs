// --role server: the echo server of --server-stack (netzlink's STREAM server or the plain .NET
// one) in this process until Ctrl+C or SIGTERM, or with --exit-on-stdin-eof also the end of stdin
// (how a parent stops its server child: ServerChildProcess, scripts/echo-server-lib.sh). Without
// that flag stdin is never read, so a server under nohup, systemd or a container without -i,
// whose stdin is at end of file from the start, keeps running.
// "READY port=<port>" on stdout is the contract with a parent (ServerChildProcess) or a script; when
// it stops, an echo server prints its receive-to-send times as one SERVER_TIME line (Output/ServerTimeLine).
using NetZlink.Stress.Cli;
using NetZlink.Stress.DotnetStack;
using NetZlink.Stress.Faults;
using NetZlink.Stress.Output;
using NetZlink.Stress.Scenarios;
using NetZlink.Stress.Tls;

namespace NetZlink.Stress.Hosting;

/// <summary>Runs an echo server (<see cref="EchoServer"/>, <see cref="DotnetEchoServer"/> or, with --fault, <see cref="FaultServer"/>) until asked to stop.</summary>
internal static class ServerHost
{
    /// <summary>Starts the server, prints READY, waits for <paramref name="stop"/> (or, if <paramref name="stopAtStdinEnd"/>, the end of stdin), stops.</summary>
    /// <exception cref="StressHostException">The server cannot run here (port in use, transport missing).</exception>
    public static async Task<int> RunAsync(
        ScenarioSettings settings, bool quiet, bool stopAtStdinEnd, TextWriter stdout, TextWriter stderr, CancellationToken stop)
    {
        if (TransportCatalog.ServerUnavailableReason(settings.Transport, settings.ServerStack) is { } missing)
        {
            throw new StressHostException($"cannot serve {settings.Transport}: {missing}");
        }

        if (settings.Fault != FaultMode.None && settings.Transport != "tcp")
        {
            throw new StressHostException($"cannot serve {settings.Transport} with --fault {FaultModeNames.Name(settings.Fault)}: the fault server speaks tcp only");
        }

        IEchoServer server = settings.Fault != FaultMode.None ? new FaultServer(settings)
            : settings.ServerStack != StackNames.Dotnet ? new EchoServer(settings)
            : settings.Transport == "tcp" ? new DotnetEchoServer(settings) : new DotnetStreamEchoServer(settings);
        try
        {
            await ServeAsync(server, settings, quiet, stopAtStdinEnd, stdout, stderr, stop).ConfigureAwait(false);
        }
        finally
        {
            server.Dispose();
        }

        // Every connection is closed and nothing records any more: the server's own times, for the
        // parent that started it (ServerChildProcess) or whoever reads this output.
        if (server.Times is { } times)
        {
            stdout.WriteLine(ServerTimeLine.Format(times.Merged()));
            stdout.Flush();
        }

        return ExitCodes.Pass;
    }

    private static async Task ServeAsync(
        IEchoServer server, ScenarioSettings settings, bool quiet, bool stopAtStdinEnd, TextWriter stdout, TextWriter stderr, CancellationToken stop)
    {
        string endpoint = Endpoint(settings.BindHost, settings.Port, settings.Transport);
        try
        {
            server.Start();
        }
        catch (Exception e)
        {
            // zlink answers EINVAL for a certificate or key it cannot read or use, and says no more; .NET names the PEM problem.
            string tlsHint = TlsEngineSettings.UsesTls(settings)
                ? $" ({settings.Transport}: --tls-cert {settings.TlsCertificateFile} and --tls-key {settings.TlsKeyFile ?? "(in the certificate file)"} must be readable PEM files, the key matching the certificate)"
                : string.Empty;
            throw new StressHostException($"cannot start the echo server on {endpoint}: {e.Message}{tlsHint}", e);
        }

        stdout.WriteLine($"READY port={server.Port}");
        stdout.Flush();
        if (!quiet)
        {
            string kind = settings.Fault == FaultMode.None ? $"{settings.ServerStack} echo server"
                : $"fault server (--fault {FaultModeNames.Name(settings.Fault)} --fault-every {settings.FaultEvery})";
            string stdinToo = stopAtStdinEnd ? " or by closing its stdin" : string.Empty;
            stderr.WriteLine($"{kind} on {Endpoint(settings.BindHost, server.Port, settings.Transport)}; stop with Ctrl+C or SIGTERM{stdinToo}");
        }

        CancellationToken stdinEnded = stopAtStdinEnd ? StdinEnd.Watch() : CancellationToken.None;
        using var either = CancellationTokenSource.CreateLinkedTokenSource(stop, stdinEnded);
        try
        {
            await Task.Delay(Timeout.Infinite, either.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }

        if (!quiet)
        {
            stderr.WriteLine(stdinEnded.IsCancellationRequested ? "echo server stopping: stdin closed" : "echo server stopping");
        }
    }

    /// <summary>"transport://host:port" (tcp by default), with brackets around an IPv6 host.</summary>
    public static string Endpoint(string host, int port, string transport = "tcp") =>
        host.Contains(':', StringComparison.Ordinal) && !host.StartsWith('[') ? $"{transport}://[{host}]:{port}" : $"{transport}://{host}:{port}";
}
