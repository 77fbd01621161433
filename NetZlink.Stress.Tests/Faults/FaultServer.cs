// A small misbehaving TCP server for the fault tests: plain .NET sockets, a task per connection
// (a handful of connections in a test), reproducing what a broken or overloaded server does.
using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace NetZlink.Stress.Tests.Faults;

using Socket = System.Net.Sockets.Socket;

internal sealed class FaultServer : IDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly FaultMode _mode;
    private readonly int _packetBody;
    private int _accepted;

    public FaultServer(FaultMode mode, int packetBody)
    {
        _mode = mode;
        _packetBody = packetBody;
        _listener.Server.ReceiveBufferSize = mode == FaultMode.Slow ? 4096 : 262144;
        _listener.Start(1024);
        _ = AcceptLoopAsync();
    }

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    public void Dispose()
    {
        _stop.Cancel();
        _listener.Stop();
        _listener.Dispose();
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        try
        {
            while (!_stop.IsCancellationRequested)
            {
                Socket socket = await _listener.AcceptSocketAsync(_stop.Token);
                int index = Interlocked.Increment(ref _accepted) - 1;
                _ = ServeAsync(socket, index);
            }
        }
        catch (OperationCanceledException)
        {
        }
        catch (SocketException)
        {
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private async Task ServeAsync(Socket socket, int index)
    {
        using (socket)
        {
            try
            {
                bool faulty = index == 0;
                switch (_mode)
                {
                    case FaultMode.Silent:
                        await DiscardAsync(socket);
                        break;
                    case FaultMode.Garbage when faulty:
                        await socket.SendAsync(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0xDE, 0xAD, 0xBE, 0xEF }, _stop.Token);
                        await DiscardAsync(socket);
                        break;
                    case FaultMode.WrongLength when faulty:
                        await EchoPacketsAsync(socket, rewriteHeader: true, closeMidPacket: false);
                        break;
                    case FaultMode.CloseMidPacket when faulty:
                        await EchoPacketsAsync(socket, rewriteHeader: false, closeMidPacket: true);
                        break;
                    case FaultMode.Slow:
                        await EchoSlowlyAsync(socket);
                        break;
                    default:
                        await EchoAsync(socket);
                        break;
                }
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException or ObjectDisposedException)
            {
            }
        }
    }

    private async Task DiscardAsync(Socket socket)
    {
        var buffer = new byte[65536];
        while (await socket.ReceiveAsync(buffer, _stop.Token) > 0)
        {
        }
    }

    private async Task EchoAsync(Socket socket)
    {
        var buffer = new byte[65536];
        int n;
        while ((n = await socket.ReceiveAsync(buffer, _stop.Token)) > 0)
        {
            await socket.SendAsync(buffer.AsMemory(0, n), _stop.Token);
        }
    }

    private async Task EchoSlowlyAsync(Socket socket)
    {
        socket.SendBufferSize = 4096;
        var buffer = new byte[4096];
        int n;
        while ((n = await socket.ReceiveAsync(buffer, _stop.Token)) > 0)
        {
            await socket.SendAsync(buffer.AsMemory(0, n), _stop.Token);
            await Task.Delay(1, _stop.Token);
        }
    }

    /// <summary>Echoes whole packets one by one, so a packet's header can be rewritten or the packet cut.</summary>
    private async Task EchoPacketsAsync(Socket socket, bool rewriteHeader, bool closeMidPacket)
    {
        int packetLength = 4 + _packetBody;
        var packet = new byte[packetLength];
        while (true)
        {
            int read = 0;
            while (read < packetLength)
            {
                int n = await socket.ReceiveAsync(packet.AsMemory(read), _stop.Token);
                if (n == 0)
                {
                    return;
                }

                read += n;
            }

            if (closeMidPacket)
            {
                await socket.SendAsync(packet.AsMemory(0, packetLength / 2), _stop.Token);
                await Task.Delay(50, _stop.Token);
                socket.Shutdown(SocketShutdown.Both);
                return;
            }

            if (rewriteHeader)
            {
                BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)(_packetBody + 1));
            }

            await socket.SendAsync(packet, _stop.Token);
        }
    }
}
