// Connection states of one socket, made from its monitor's events (ZlinkSocket.WatchConnections).
//
// One monitor handle and one reader thread per watcher. The thread reads events with the monitor's
// own timed receive, turns those about connections into ConnectionStateChange values and writes
// them to an unbounded channel (the native monitor queue is bounded; this one never drops, so the
// order per connection is kept: Connected and Disconnected alternate). It ends when the monitor
// reports MonitorStopped (the socket closed), when the socket or its context is disposed, or when
// the watcher is; the last change written is always one Closed, and the channel completes after it.
using System.Threading.Channels;

namespace NetZlink;

/// <summary>
/// Reports the connection state changes of a socket (see <see cref="ZlinkSocket.WatchConnections"/>):
/// read <see cref="Changes"/> (or enumerate <see cref="ReadAllAsync"/>) from any thread. Dispose it to stop
/// watching; closing the socket or its context stops it too, with a last <see cref="ConnectionState.Closed"/>.
/// </summary>
public sealed class ZlinkConnectionWatcher : IDisposable
{
    private static readonly TimeSpan PollSlice = TimeSpan.FromMilliseconds(50);

    private readonly ZlinkSocket _socket;
    private readonly ZlinkMonitor _monitor;
    private readonly Channel<ConnectionStateChange> _changes;
    private readonly Thread _reader;
    private readonly Dictionary<string, string> _handshakeFailures = new(StringComparer.Ordinal);
    private volatile bool _stopping;

    internal ZlinkConnectionWatcher(ZlinkSocket socket)
    {
        _socket = socket;
        _monitor = socket.OpenMonitor(Watched);
        _changes = Channel.CreateUnbounded<ConnectionStateChange>(new UnboundedChannelOptions { SingleWriter = true });
        _reader = new Thread(Run) { IsBackground = true, Name = "NetZlink connection watcher" };
        _reader.Start();
    }

    /// <summary>The monitor events a watcher asks for.</summary>
    internal const MonitorEvents Watched = MonitorEvents.ConnectDelayed | MonitorEvents.ConnectRetried | MonitorEvents.ConnectionReady
        | MonitorEvents.Disconnected | MonitorEvents.MonitorStopped
        | MonitorEvents.HandshakeFailedNoDetail | MonitorEvents.HandshakeFailedProtocol | MonitorEvents.HandshakeFailedAuth;

    /// <summary>The changes, in the order the socket reported them; completes after the last (<see cref="ConnectionState.Closed"/>).</summary>
    public ChannelReader<ConnectionStateChange> Changes => _changes.Reader;

    /// <summary>The changes as an async stream, until the watch ends or <paramref name="cancellationToken"/> is cancelled.</summary>
    /// <param name="cancellationToken">Stops the enumeration (not the watch).</param>
    /// <returns>The changes.</returns>
    public IAsyncEnumerable<ConnectionStateChange> ReadAllAsync(CancellationToken cancellationToken = default) =>
        _changes.Reader.ReadAllAsync(cancellationToken);

    /// <summary>True once the watch ended (its <see cref="ConnectionState.Closed"/> written).</summary>
    public bool IsClosed => _changes.Reader.Completion.IsCompleted || !_reader.IsAlive;

    /// <summary>
    /// Stops watching: closes the monitor, writes <see cref="ConnectionState.Closed"/> and completes
    /// <see cref="Changes"/>; changes already written stay readable. Idempotent, safe from any thread.
    /// </summary>
    public void Dispose()
    {
        _stopping = true;
        if (Thread.CurrentThread != _reader)
        {
            _reader.Join();
        }
    }

    private void Run()
    {
        try
        {
            while (!_stopping)
            {
                MonitorEvent monitorEvent;
                try
                {
                    if (!_monitor.TryReceive(out monitorEvent, PollSlice))
                    {
                        if (_socket.IsDisposed)
                        {
                            // The socket went away without MonitorStopped reaching us (its context shut down).
                            break;
                        }

                        continue;
                    }
                }
                catch (Exception error) when (error is ObjectDisposedException or ZlinkException)
                {
                    break;
                }

                if (monitorEvent.EventType == MonitorEvents.MonitorStopped)
                {
                    break;
                }

                if (Translate(monitorEvent) is ConnectionStateChange change)
                {
                    _changes.Writer.TryWrite(change);
                }
            }
        }
        finally
        {
            _monitor.Dispose();
            _changes.Writer.TryWrite(new ConnectionStateChange(ConnectionState.Closed, default, null));
            _changes.Writer.TryComplete();
        }
    }

    private ConnectionStateChange? Translate(in MonitorEvent monitorEvent)
    {
        switch (monitorEvent.EventType)
        {
            case MonitorEvents.ConnectDelayed:
                return new ConnectionStateChange(ConnectionState.Connecting, monitorEvent, null);
            case MonitorEvents.ConnectRetried:
                return new ConnectionStateChange(ConnectionState.Retrying, monitorEvent, null);
            case MonitorEvents.ConnectionReady:
                return new ConnectionStateChange(ConnectionState.Connected, monitorEvent, null);
            case MonitorEvents.Disconnected:
                string? failure = TakeHandshakeFailure(monitorEvent.RemoteAddress) ?? TakeHandshakeFailure(monitorEvent.LocalAddress);
                return new ConnectionStateChange(
                    ConnectionState.Disconnected, monitorEvent, monitorEvent.DisconnectReason == DisconnectReason.HandshakeFailed ? failure : null);
            case MonitorEvents.HandshakeFailedNoDetail or MonitorEvents.HandshakeFailedProtocol or MonitorEvents.HandshakeFailedAuth:
                // Held until that connection's Disconnected, which follows it.
                string key = monitorEvent.RemoteAddress.Length > 0 ? monitorEvent.RemoteAddress : monitorEvent.LocalAddress;
                if (_handshakeFailures.Count < 1024)
                {
                    _handshakeFailures[key] = monitorEvent.TlsFailure ?? $"{monitorEvent.EventType} errno {monitorEvent.Value}";
                }

                return null;
            default:
                return null;
        }
    }

    private string? TakeHandshakeFailure(string address) =>
        address.Length > 0 && _handshakeFailures.Remove(address, out string? failure) ? failure : null;
}
