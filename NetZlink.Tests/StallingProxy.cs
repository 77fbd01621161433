// A TCP proxy between a test's sockets that can stop forwarding (a peer whose process stalls: the
// kernel keeps the connection open and acknowledges bytes, nothing answers) and start again. Each
// accepted connection gets its own upstream connection and two pumps; a stalled pump holds what it
// read and waits, so nothing crosses in either direction until Resume.
namespace NetZlink.Tests;

internal sealed class StallingProxy : IDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly int _targetPort;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Socket> _sockets = [];
    private readonly Task _accepting;
    private volatile TaskCompletionSource _gate = Open();

    public StallingProxy(string targetEndpoint)
    {
        _targetPort = int.Parse(targetEndpoint[(targetEndpoint.LastIndexOf(':') + 1)..], System.Globalization.CultureInfo.InvariantCulture);
        _listener.Start();
        _accepting = Task.Run(AcceptAsync);
    }

    public string Endpoint => $"tcp://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}";

    /// <summary>Stops forwarding, in both directions, on every connection (and on those accepted later).</summary>
    public void Stall() => _gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Forwards again, what was held first.</summary>
    public void Resume() => _gate.TrySetResult();

    public void Dispose()
    {
        _stop.Cancel();
        _listener.Stop();
        _gate.TrySetResult();
        lock (_sockets)
        {
            foreach (Socket socket in _sockets)
            {
                socket.Dispose();
            }
        }

        try
        {
            _accepting.Wait(Wait.Long);
        }
        catch (AggregateException)
        {
            // the listener stopped under it
        }

        _stop.Dispose();
    }

    private static TaskCompletionSource Open()
    {
        var open = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        open.SetResult();
        return open;
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket client;
            try
            {
                client = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }

            var upstream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            lock (_sockets)
            {
                _sockets.Add(client);
                _sockets.Add(upstream);
            }

            try
            {
                await upstream.ConnectAsync(IPAddress.Loopback, _targetPort, _stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                client.Dispose();
                upstream.Dispose();
                continue;
            }

            _ = PumpAsync(client, upstream);
            _ = PumpAsync(upstream, client);
        }
    }

    private async Task PumpAsync(Socket from, Socket to)
    {
        byte[] buffer = new byte[16 * 1024];
        try
        {
            while (true)
            {
                int read = await from.ReceiveAsync(buffer, SocketFlags.None, _stop.Token);
                await _gate.Task.WaitAsync(_stop.Token);
                if (read == 0)
                {
                    break;
                }

                await to.SendAsync(buffer.AsMemory(0, read), SocketFlags.None, _stop.Token);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // torn down
        }

        // One side ended (or failed): end both, as a peer that goes away would.
        from.Dispose();
        to.Dispose();
    }
}
