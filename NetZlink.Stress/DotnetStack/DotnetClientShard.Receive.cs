// The receive side of a dotnet client shard. Each connection keeps one zero-byte receive
// outstanding: it completes when the socket is readable, without a buffer tied up per idle
// connection. The completion then reads with non-blocking Socket.Receive into the thread's
// buffer until the socket is empty, frames the packets ([u32 BE length][body], split or merged
// arbitrarily) with the library's PacketReassembler (a partial packet waits in its pooled buffer), counts them, and tops the
// connection up while the phase sends. One zero-byte receive at a time means one receive callback
// at a time per connection, so the receive fields of DotnetConnection are plain.
using System.Net.Sockets;
using NetZlink.Engine;
using NetZlink.Stress.Latency;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

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
        long measuredBefore = c.Counters.ReceivedMeasured;
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

        if (_plan.IsOpen && c.Counters.ReceivedMeasured != measuredBefore)
        {
            Volatile.Write(ref c.Counters.LastMeasuredEchoNs, LoadPlan.NowNanoseconds());
        }

        c.Counters.SettleEchoes(echoes, shared: true);

        bool open = endErrno < 0;
        if (!open)
        {
            // Only this callback feeds the connection's partial packet, so only it gives the buffer back.
            _reassembler.Release(ref c.Partial);
            Close(slot, endErrno, byPeer);
        }
        else if (echoes > 0 && _plan.SendsIn(phase))
        {
            Kick(slot, state);
        }

        return open;
    }

    /// <summary>Frames <paramref name="data"/> with the library's PacketReassembler; returns the good echoes, <paramref name="bad"/> on a bad one.</summary>
    private int Frame(int slot, ref DotnetConnection c, ReadOnlySpan<byte> data, LoadPhase phase, ClientThreadState state, out bool bad)
    {
        var sink = new EchoSink(this, slot, phase, state);
        ReassemblyResult result = _reassembler.Feed(ref c.Partial, data, ref sink);
        if (result == ReassemblyResult.ProtocolError)
        {
            // A length other than the run's packet size: counted as the netzlink engine's framer counts it.
            c.Counters.ProtocolErrors++;
        }

        bad = result != ReassemblyResult.Consumed;
        return sink.Echoes;
    }

    /// <summary>Where the reassembler hands each whole echo of one connection.</summary>
    private struct EchoSink(DotnetClientShard shard, int slot, LoadPhase phase, ClientThreadState state) : IPacketSink
    {
        public int Echoes;

        public bool OnPacket(ReadOnlySpan<byte> packet)
        {
            if (!shard.OnEcho(ref shard._connections[slot], packet, phase, state))
            {
                return false;
            }

            Echoes++;
            return true;
        }
    }

    private bool OnEcho(ref DotnetConnection c, ReadOnlySpan<byte> packet, LoadPhase phase, ClientThreadState state)
    {
        EchoCount count = c.Counters.CountEcho(_plan, _expectedBody, packet);
        int rate = _plan.LatencySampleRate;
        if (count == EchoCount.Measured && rate > 0 && phase != LoadPhase.Done && ++state.MeasuredSeen % rate == 0)
        {
            LatencyHistograms.Record(state.Histogram, LoadPlan.NowNanoseconds() - EchoConnectionCounters.SentAtNs(packet));
        }

        return count != EchoCount.Bad;
    }
}
