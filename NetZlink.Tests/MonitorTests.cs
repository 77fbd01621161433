// Monitors report typed events with addresses: listening, connect/accept, disconnect.
namespace NetZlink.Tests;

public sealed class MonitorTests : ContextTest
{
    [Test, CancelAfter(30_000)]
    public void Monitor_ReportsListeningAcceptedConnectedAndDisconnected()
    {
        using var server = Context.CreateSocket(ZlinkSocketType.Router);
        using var serverMonitor = server.OpenMonitor(MonitorEvents.All);
        string endpoint = Endpoints.BindFresh(server, "tcp");
        string port = endpoint[(endpoint.LastIndexOf(':') + 1)..];

        Assert.That(serverMonitor.TryReceive(MonitorEvents.Listening, Wait.Long, out MonitorEvent listening), Is.True, "LISTENING");
        Assert.That(listening.LocalAddress + " " + listening.RemoteAddress, Does.Contain(port));
        TestContext.Out.WriteLine(listening);

        var client = Context.CreateSocket(ZlinkSocketType.Dealer);
        using (var clientMonitor = client.OpenMonitor(MonitorEvents.Connected | MonitorEvents.ConnectionReady))
        {
            client.Connect(endpoint);
            Assert.That(clientMonitor.TryReceive(MonitorEvents.Connected, Wait.Long, out MonitorEvent connected), Is.True, "CONNECTED");
            Assert.That(connected.LocalAddress + " " + connected.RemoteAddress, Does.Contain(port));
            TestContext.Out.WriteLine(connected);
        }

        Assert.That(serverMonitor.TryReceive(MonitorEvents.Accepted, Wait.Long, out MonitorEvent accepted), Is.True, "ACCEPTED");
        TestContext.Out.WriteLine(accepted);

        client.Dispose();
        Assert.That(serverMonitor.TryReceive(MonitorEvents.Disconnected, Wait.Long, out MonitorEvent disconnected), Is.True, "DISCONNECTED");
        Assert.That(disconnected.EventType, Is.EqualTo(MonitorEvents.Disconnected));
        TestContext.Out.WriteLine($"{disconnected} reason={disconnected.DisconnectReason}");
    }

    [Test, CancelAfter(10_000)]
    public void TryReceive_WithNothingPending_ReturnsFalse()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        using var monitor = socket.OpenMonitor(MonitorEvents.Disconnected);

        Assert.That(monitor.TryReceive(out MonitorEvent none), Is.False);
        Assert.That(none.EventType, Is.EqualTo(MonitorEvents.None));
        Assert.That(monitor.TryReceive(out _, TimeSpan.FromMilliseconds(30)), Is.False);
    }

    [Test, CancelAfter(10_000)]
    public void Monitor_AfterDispose_ThrowsObjectDisposed_AndContextDisposeClosesOpenMonitors()
    {
        var context = new ZlinkContext();
        var socket = context.CreateSocket(ZlinkSocketType.Pair);
        var monitor = socket.OpenMonitor();
        var disposedMonitor = socket.OpenMonitor();
        disposedMonitor.Dispose();
        disposedMonitor.Dispose();
        Assert.Throws<ObjectDisposedException>(() => disposedMonitor.TryReceive(out _));

        context.Dispose();
        Assert.Throws<ObjectDisposedException>(() => monitor.TryReceive(out _));
        Assert.That(socket.IsDisposed, Is.True);
    }
    [Test, CancelAfter(10_000)]
    public void Receive_EndedByContextDispose_ThrowsContextTerminated_AsASocketReceiveDoes()
    {
        var context = new ZlinkContext();
        var socket = context.CreateSocket(ZlinkSocketType.Pair);
        var monitor = socket.OpenMonitor();
        var blockedSocket = context.CreateSocket(ZlinkSocketType.Pair);
        blockedSocket.Bind(Endpoints.Inproc());

        var receiving = Task.Factory.StartNew(() => monitor.Receive(), TaskCreationOptions.LongRunning);
        var socketReceiving = Task.Factory.StartNew(() => blockedSocket.Receive(new byte[16]), TaskCreationOptions.LongRunning);
        Thread.Sleep(100);
        context.Dispose();

        var monitorError = Assert.Throws<AggregateException>(() => receiving.Wait(Wait.Long))!;
        var socketError = Assert.Throws<AggregateException>(() => socketReceiving.Wait(Wait.Long))!;
        Assert.Multiple(() =>
        {
            Assert.That(socketError.InnerException, Is.TypeOf<ContextTerminatedException>(), "the socket's answer");
            Assert.That(monitorError.InnerException, Is.TypeOf<ContextTerminatedException>(), "the monitor gives the same");
        });
    }

    [Test, CancelAfter(10_000)]
    public void Receive_EndedByTheMonitorsOwnDispose_ThrowsObjectDisposed()
    {
        using var socket = Context.CreateSocket(ZlinkSocketType.Pair);
        var monitor = socket.OpenMonitor();

        var receiving = Task.Factory.StartNew(() => monitor.Receive(), TaskCreationOptions.LongRunning);
        Thread.Sleep(100);
        monitor.Dispose();

        var error = Assert.Throws<AggregateException>(() => receiving.Wait(Wait.Long))!;
        Assert.That(error.InnerException, Is.TypeOf<ObjectDisposedException>());
    }
}
