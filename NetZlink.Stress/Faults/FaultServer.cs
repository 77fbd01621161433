// The built-in misbehaving server behind --fault: accepts like the echo server, and gives every
// --fault-every-th accepted connection (0-based index i with i % K == 0, so K = 1 means all of
// them) the fault of --fault; the other connections are echoed normally, so a test can show that
// one bad connection does not disturb the rest. Plain .NET sockets with a task per connection:
// a fault run has a handful of connections, and the point is reproducing a broken peer exactly,
// not speed. The same type serves `--role server --fault …` and the fault tests.
using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using NetZlink.Stress.DotnetStack;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.Faults;

using Socket = System.Net.Sockets.Socket;

/// <summary>A TCP server that echoes, except on the connections <see cref="IsFaulty"/> picks.</summary>
internal sealed class FaultServer : IEchoServer
{
    // Slow mode reads this much at a time and pauses SlowPause after each read.
    private const int SlowChunk = 4096;
    private static readonly TimeSpan SlowPause = TimeSpan.FromMilliseconds(1);


    private readonly ScenarioSettings _settings;
    private readonly CancellationTokenSource _stop = new();
    private Socket? _listener;
    private long _accepted;
    private long _open;
    private Exception? _fault;
    private int _crashArmed;

    /// <summary>Creates the server for <paramref name="settings"/>' Fault, FaultEvery and FaultAfterSeconds; binds on <see cref="Start"/>.</summary>
    public FaultServer(ScenarioSettings settings)
    {
        _settings = settings ?? throw new ArgumentNullException(nameof(settings));
        if (settings.Fault == FaultMode.None)
        {
            throw new ArgumentException("The fault server needs a fault (--fault other than none).", nameof(settings));
        }

        if (settings.FaultEvery < 1)
        {
            throw new ArgumentException($"--fault-every must be at least 1 (got {settings.FaultEvery}).", nameof(settings));
        }
    }

    public int Port { get; private set; }

    public long Connections => Interlocked.Read(ref _open);

    /// <summary>Connections accepted since the start.</summary>
    public long Accepted => Interlocked.Read(ref _accepted);

    public Exception? Fault => Volatile.Read(ref _fault);

    /// <summary>None: a fault server's times would say nothing about an echo server.</summary>
    public Latency.ServerTimes? Times => null;

    /// <summary>Whether the <paramref name="index"/>-th accepted connection (0-based) gets the fault.</summary>
    public static bool IsFaulty(long index, int every) => index % every == 0;

    /// <summary>Binds BindHost:Port (Port 0: any free port) and starts accepting.</summary>
    public void Start()
    {
        if (_listener is not null)
        {
            throw new InvalidOperationException("The fault server is already started.");
        }

        // The dotnet echo server's listener: buffer sizes pass on to accepted sockets (slow mode's small buffers).
        Socket listener = ServerListener.Open(_settings);
        _listener = listener;
        Port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        _ = AcceptLoopAsync(listener);
    }

    public void Dispose()
    {
        _stop.Cancel();
        _listener?.Dispose();
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync(Socket listener)
    {
        try
        {
            while (true)
            {
                Socket socket = await listener.AcceptAsync(_stop.Token).ConfigureAwait(false);
                long index = Interlocked.Increment(ref _accepted) - 1;
                ArmCrash();
                _ = ServeAsync(socket, IsFaulty(index, _settings.FaultEvery));
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
        {
        }
        catch (SocketException e)
        {
            Volatile.Write(ref _fault, e);
        }
    }

    /// <summary>Crash mode: the first connection starts the countdown to SIGKILL of this whole process.</summary>
    private void ArmCrash()
    {
        if (_settings.Fault != FaultMode.Crash || Interlocked.Exchange(ref _crashArmed, 1) != 0)
        {
            return;
        }

        _ = Task.Run(async () =>
        {
            await Task.Delay(TimeSpan.FromSeconds(_settings.FaultAfterSeconds), _stop.Token).ConfigureAwait(false);
            await Console.Error.WriteLineAsync($"fault server: killing itself with SIGKILL ({_settings.FaultAfterSeconds:0.###} s after the first connection, as --fault crash asks)").ConfigureAwait(false);
            await Console.Error.FlushAsync().ConfigureAwait(false);
            // Process.Kill on Unix is SIGKILL: no cleanup, sockets reset by the kernel, as a real crash.
            using Process self = Process.GetCurrentProcess();
            self.Kill();
        });
    }

    private async Task ServeAsync(Socket socket, bool faulty)
    {
        Interlocked.Increment(ref _open);
        using (socket)
        {
            try
            {
                FaultMode mode = faulty ? _settings.Fault : FaultMode.None;
                switch (mode)
                {
                    case FaultMode.Silent:
                        await DiscardAsync(socket).ConfigureAwait(false);
                        break;
                    case FaultMode.Garbage:
                        // After the client's first bytes, so that it has packets outstanding to lose.
                        if (await socket.ReceiveAsync(new byte[1], _stop.Token).ConfigureAwait(false) == 0)
                        {
                            break;
                        }

                        await socket.SendAsync(Garbage(), _stop.Token).ConfigureAwait(false);
                        await DiscardAsync(socket).ConfigureAwait(false);
                        break;
                    case FaultMode.WrongLength:
                        await EchoPacketsAsync(socket, rewriteHeader: true).ConfigureAwait(false);
                        break;
                    case FaultMode.CloseMidPacket:
                        await CloseMidPacketAsync(socket).ConfigureAwait(false);
                        break;
                    case FaultMode.Slow:
                        await EchoAsync(socket, SlowChunk, SlowPause).ConfigureAwait(false);
                        break;
                    case FaultMode.Stall:
                        await EchoAsync(socket, 65536, TimeSpan.Zero, TimeSpan.FromSeconds(_settings.FaultAfterSeconds)).ConfigureAwait(false);
                        break;
                    default:
                        await EchoAsync(socket, 65536, TimeSpan.Zero).ConfigureAwait(false);
                        break;
                }
            }
            catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
            {
                // The client went away or the server is stopping: nothing to report for one connection.
            }
            finally
            {
                Interlocked.Decrement(ref _open);
            }
        }
    }

    /// <summary>
    /// A whole packet's worth of garbage under a header far above any --size: a client that frames
    /// by the header rejects it at once, one that reads whole packets when the last byte comes.
    /// </summary>
    private byte[] Garbage()
    {
        var garbage = new byte[4 + _settings.Size];
        garbage.AsSpan().Fill(0xDE);
        BinaryPrimitives.WriteUInt32BigEndian(garbage, uint.MaxValue);
        return garbage;
    }

    private async Task DiscardAsync(Socket socket)
    {
        var buffer = new byte[65536];
        while (await socket.ReceiveAsync(buffer, _stop.Token).ConfigureAwait(false) > 0)
        {
        }
    }

    /// <summary>Echoes what it reads, pausing <paramref name="pause"/> after each read and <paramref name="stall"/> once, before the first echo.</summary>
    private async Task EchoAsync(Socket socket, int chunk, TimeSpan pause, TimeSpan stall = default)
    {
        var buffer = new byte[chunk];
        int n;
        while ((n = await socket.ReceiveAsync(buffer, _stop.Token).ConfigureAwait(false)) > 0)
        {
            if (stall > TimeSpan.Zero)
            {
                // Reading nothing meanwhile: the client's packets queue up in the socket buffers.
                await Task.Delay(stall, _stop.Token).ConfigureAwait(false);
                stall = TimeSpan.Zero;
            }

            await socket.SendAsync(buffer.AsMemory(0, n), _stop.Token).ConfigureAwait(false);
            if (pause > TimeSpan.Zero)
            {
                await Task.Delay(pause, _stop.Token).ConfigureAwait(false);
            }
        }
    }

    /// <summary>Reads one whole packet into <paramref name="packet"/>; false when the peer closed first.</summary>
    private async Task<bool> ReadPacketAsync(Socket socket, byte[] packet)
    {
        int read = 0;
        while (read < packet.Length)
        {
            int n = await socket.ReceiveAsync(packet.AsMemory(read), _stop.Token).ConfigureAwait(false);
            if (n == 0)
            {
                return false;
            }

            read += n;
        }

        return true;
    }

    /// <summary>Echoes packet by packet so that each header can be rewritten to size + 1.</summary>
    private async Task EchoPacketsAsync(Socket socket, bool rewriteHeader)
    {
        var packet = new byte[4 + _settings.Size];
        while (await ReadPacketAsync(socket, packet).ConfigureAwait(false))
        {
            if (rewriteHeader)
            {
                BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)(_settings.Size + 1));
            }

            await socket.SendAsync(packet, _stop.Token).ConfigureAwait(false);
        }
    }

    /// <summary>Sends back the first half of the first packet, then closes its sending side.</summary>
    private async Task CloseMidPacketAsync(Socket socket)
    {
        var packet = new byte[4 + _settings.Size];
        if (!await ReadPacketAsync(socket, packet).ConfigureAwait(false))
        {
            return;
        }

        await socket.SendAsync(packet.AsMemory(0, packet.Length / 2), _stop.Token).ConfigureAwait(false);
        // A FIN after the half packet, and unread input kept reading until the client closes: closing
        // with unread input would send a reset instead, which may overtake the half packet.
        socket.Shutdown(SocketShutdown.Send);
        await DiscardAsync(socket).ConfigureAwait(false);
    }
}
