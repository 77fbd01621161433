// The receive side of a dotnet client shard. Each connection keeps one zero-byte receive
// outstanding: it completes when the socket is readable, without a buffer tied up per idle
// connection. The completion then reads with non-blocking Socket.Receive into the thread's
// buffer until the socket is empty, frames the packets ([u32 BE length][body], split or merged
// arbitrarily; a partial packet waits in the connection's tail), counts them, and tops the
// connection up while the phase sends. One zero-byte receive at a time means one receive callback
// at a time per connection, so the receive fields of DotnetConnection are plain.
using System.Buffers.Binary;
using System.Net.Sockets;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

// Inside NetZlink.*, NetZlink.Socket would shadow System.Net.Sockets.Socket.
using Socket = System.Net.Sockets.Socket;

internal sealed partial class DotnetClientShard
{
    /// <summary>Called by the runtime when a zero-byte receive completes: the socket is readable (or failed).</summary>
    public void OnReceiveCompleted(ClientSocketEventArgs args)
    {
        try
        {
            ReceiveLoop(args.Slot, args, arm: false);
        }
#pragma warning disable CA1031 // a callback on a runtime thread must not throw: the runner hears of it instead
        catch (Exception e)
#pragma warning restore CA1031
        {
            _client.ReportFault(e);
        }
    }

    private void StartReceiving(int slot)
    {
        ClientSocketEventArgs args = _receiveArgs[slot];
        args.RemoteEndPoint = null;
        args.SetBuffer(Memory<byte>.Empty);
        ReceiveLoop(slot, args, arm: true);
    }

    /// <summary>Drains the socket after each completion and re-arms the zero-byte receive, until one pends.</summary>
    private void ReceiveLoop(int slot, ClientSocketEventArgs args, bool arm)
    {
        Socket socket = _connections[slot].Socket!;
        while (true)
        {
            if (arm)
            {
                bool pending;
                try
                {
                    pending = socket.ReceiveAsync(args);
                }
                catch (ObjectDisposedException)
                {
                    Close(slot, errno: 0);
                    return;
                }

                if (pending)
                {
                    return;
                }
            }

            arm = true;
            if (args.SocketError != SocketError.Success)
            {
                Close(slot, SocketErrno.Of(args.SocketError), byPeer: args.SocketError != SocketError.OperationAborted);
                return;
            }

            if (!Drain(slot, socket))
            {
                return;
            }
        }
    }

    /// <summary>Reads until the socket would block; false when the connection ended.</summary>
    private bool Drain(int slot, Socket socket)
    {
        ClientThreadState state = ClientThreadState.For(_client);
        LoadPhase phase = _plan.Phase;
        using CallbackScope scope = state.Enter(phase);
        ref DotnetConnection c = ref _connections[slot];
        byte[] buffer = state.ReceiveBuffer;
        int echoes = 0;
        long measuredBefore = c.ReceivedMeasured;
        int endErrno = -1;
        bool byPeer = false;
        while (true)
        {
            int read;
            SocketError error;
            try
            {
                read = socket.Receive(buffer, SocketFlags.None, out error);
            }
            catch (ObjectDisposedException)
            {
                (read, error) = (0, SocketError.OperationAborted);
            }

            if (error == SocketError.WouldBlock)
            {
                break;
            }

            if (error != SocketError.Success || read == 0)
            {
                // 0 bytes: the server closed; OperationAborted: this side closed it. Neither is an error to count.
                endErrno = error is SocketError.Success or SocketError.OperationAborted ? 0 : SocketErrno.Of(error);
                byPeer = error != SocketError.OperationAborted;
                break;
            }

            int framed = Frame(slot, ref c, buffer.AsSpan(0, read), phase, state, out bool bad);
            echoes += framed;
            if (bad)
            {
                endErrno = 0;
                break;
            }

            if (read < buffer.Length)
            {
                break;
            }
        }

        if (_plan.IsOpen && c.ReceivedMeasured != measuredBefore)
        {
            Volatile.Write(ref c.LastMeasuredEchoNs, LoadPlan.NowNanoseconds());
        }

        if (echoes > 0)
        {
            int after = Interlocked.Add(ref c.Outstanding, -echoes);
            if (after < 0)
            {
                // Echoes of packets never sent: a bookkeeping error, counted and not let to go negative.
                int excess = Math.Min(echoes, -after);
                c.GatingViolations += excess;
                Interlocked.Add(ref c.Outstanding, excess);
            }
        }

        bool open = endErrno < 0;
        if (!open)
        {
            Close(slot, endErrno, byPeer);
        }
        else if (echoes > 0 && _plan.SendsIn(phase))
        {
            Kick(slot, state);
        }

        return open;
    }

    /// <summary>Frames <paramref name="data"/> after the connection's tail; returns the good echoes, <paramref name="bad"/> on a bad one.</summary>
    private int Frame(int slot, ref DotnetConnection c, ReadOnlySpan<byte> data, LoadPhase phase, ClientThreadState state, out bool bad)
    {
        bad = false;
        int length = _plan.PacketLength;
        int offset = 0;
        int echoes = 0;
        if (c.TailLength > 0)
        {
            Span<byte> tail = _tails.AsSpan(slot * length, length);
            int take = Math.Min(length - c.TailLength, data.Length);
            data[..take].CopyTo(tail[c.TailLength..]);
            c.TailLength += take;
            offset = take;
            if (c.TailLength < length)
            {
                return 0;
            }

            c.TailLength = 0;
            if (!OnEcho(ref c, tail, phase, state))
            {
                bad = true;
                return 0;
            }

            echoes++;
        }

        while (data.Length - offset >= length)
        {
            if (!OnEcho(ref c, data.Slice(offset, length), phase, state))
            {
                bad = true;
                return echoes;
            }

            echoes++;
            offset += length;
        }

        if (offset < data.Length)
        {
            data[offset..].CopyTo(_tails.AsSpan(slot * length, length));
            c.TailLength = data.Length - offset;
        }

        return echoes;
    }

    private bool OnEcho(ref DotnetConnection c, ReadOnlySpan<byte> packet, LoadPhase phase, ClientThreadState state)
    {
        if (BinaryPrimitives.ReadUInt32BigEndian(packet) != (uint)_plan.Size)
        {
            // Counted as the netzlink engine's framer counts it: a protocol error, not a bad echo.
            c.ProtocolErrors++;
            return false;
        }

        if (_plan.VerifyPayload && !packet[(4 + 9)..].SequenceEqual(_expectedBody.AsSpan(9)))
        {
            c.BadEchoes++;
            return false;
        }

        c.ReceivedTotal++;
        if (packet[4] == 1)
        {
            c.ReceivedMeasured++;
            int rate = _plan.LatencySampleRate;
            if (rate > 0 && phase != LoadPhase.Done && ++state.MeasuredSeen % rate == 0)
            {
                long sentAt = BinaryPrimitives.ReadInt64LittleEndian(packet[5..]);
                LatencyHistograms.Record(state.Histogram, LoadPlan.NowNanoseconds() - sentAt);
            }
        }

        return true;
    }
}
