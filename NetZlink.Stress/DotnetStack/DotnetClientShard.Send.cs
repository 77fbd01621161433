// The send side of a dotnet client shard: keeps up to `inflight` packets outstanding per
// connection, in frames of up to --send-batch packets written in place into the thread's scratch
// and handed to the kernel with one non-blocking Socket.Send. Only the rest of a frame the kernel
// did not take is copied (to the connection's own overflow buffer, made once) and sent with the
// connection's send event args; its completion resumes the pump.
//
// Who sends: whoever takes SendBusy (0 → 1) — the receive path after echoes, the shard thread
// when a sending phase starts, a connect completion, or an overflow send's completion. A caller
// that finds it taken sets Wanted; the holder re-checks Wanted after letting go, so no request
// is lost and two threads never write one socket:
//
//   Kick:  Wanted = 1; if CAS(SendBusy 0 → 1) Pump
//   Pump:  loop { Wanted = 0; want = inflight - Outstanding (capped by batch and budget);
//                 if want == 0 { SendBusy = 0; if Wanted == 0 or CAS(SendBusy 0 → 1) fails: return }
//                 Outstanding += want; build; send (an overflow that pends returns, holding SendBusy) }
//
// Outstanding grows before the bytes leave, so an echo can never arrive ahead of its count.
//
// Open model (--rate): want is what the connection owes by the schedule (due by now minus sent),
// capped by inflight; the shard thread kicks each connection when its packets fall due. A
// connection that still owes when the cap stops it, or whose rest of a frame waits on an overflow
// send, is Blocked: what it sends next was held past its due time and counts as late.
using System.Net.Sockets;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

internal sealed partial class DotnetClientShard
{
    /// <summary>Called by the runtime when an overflow send completes.</summary>
    public void OnSendCompleted(ClientSocketEventArgs args)
    {
        try
        {
            ClientThreadState state = ClientThreadState.For(_client);
            using CallbackScope scope = state.Enter(_plan.Phase);
            if (!(OverflowLeft(args.Slot, args) && SendOverflow(args.Slot, args)))
            {
                Pump(args.Slot, state);
            }
        }
#pragma warning disable CA1031 // a callback on a runtime thread must not throw: the runner hears of it instead
        catch (Exception e)
#pragma warning restore CA1031
        {
            _client.ReportFault(e);
        }
    }

    /// <summary>Asks for a top-up of <paramref name="slot"/>; sends now unless another thread is sending it.</summary>
    private void Kick(int slot, ClientThreadState state)
    {
        ref DotnetConnection c = ref _connections[slot];
        Volatile.Write(ref c.Wanted, 1);
        if (Interlocked.CompareExchange(ref c.SendBusy, 1, 0) == 0)
        {
            Pump(slot, state);
        }
    }

    /// <summary>Sends frames until the connection has `inflight` outstanding (or, open model, owes nothing); the caller holds SendBusy.</summary>
    private void Pump(int slot, ClientThreadState state)
    {
        ref DotnetConnection c = ref _connections[slot];
        while (true)
        {
            Interlocked.Exchange(ref c.Wanted, 0);
            LoadPhase phase = _plan.Phase;
            OpenSchedule? schedule = _plan.Schedule;
            int want = 0;
            bool late = false;
            if (_plan.SendsIn(phase) && Volatile.Read(ref c.State) == (int)DotnetConnectionState.Connected)
            {
                want = c.Counters.Wants(_plan, schedule, ConnectionIndex(slot), state.PacketsPerFrame, out late);
            }

            if (want <= 0)
            {
                Interlocked.Exchange(ref c.SendBusy, 0);
                if (Volatile.Read(ref c.Wanted) == 0 || Interlocked.CompareExchange(ref c.SendBusy, 1, 0) != 0)
                {
                    return;
                }

                continue;
            }

            Interlocked.Add(ref c.Counters.Outstanding, want);
            if (Volatile.Read(ref c.State) != (int)DotnetConnectionState.Connected)
            {
                // Closed meanwhile: Close may have cleared Outstanding before this add, so clear it again.
                Interlocked.Exchange(ref c.Counters.Outstanding, 0);
                continue;
            }

            bool measured = _plan.IsMeasured(phase);
            byte phaseByte = measured ? (byte)1 : (byte)0;
            ReadOnlySpan<byte> frame;
            if (schedule is not null)
            {
                frame = state.BuildScheduledFrame(want, phaseByte, schedule, ConnectionIndex(slot), c.Counters.ScheduledSent);
            }
            else
            {
                frame = state.BuildFrame(want, phaseByte, LoadPlan.NowNanoseconds());
            }

            c.Counters.CountSent(want, measured, scheduled: schedule is not null, late);

            if (SendFrame(slot, ref c, frame))
            {
                return;
            }
        }
    }

    /// <summary>Writes <paramref name="frame"/>; true when the rest went to an overflow send that is pending.</summary>
    private bool SendFrame(int slot, ref DotnetConnection c, ReadOnlySpan<byte> frame)
    {
        int sent;
        SocketError error;
        try
        {
            sent = c.Socket!.Send(frame, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            (sent, error) = (0, SocketError.OperationAborted);
        }

        if (error == SocketError.Success && sent == frame.Length)
        {
            return false;
        }

        if (error is not (SocketError.Success or SocketError.WouldBlock))
        {
            Close(slot, error == SocketError.OperationAborted ? 0 : SocketErrno.Of(error));
            return false;
        }

        // The kernel took part (or none) of it: the rest leaves from the connection's own buffer.
        // Open model: packets falling due meanwhile are held back by it (set before the send is
        // issued: its completion may run on another thread at once).
        c.Counters.Blocked = true;
        byte[] overflow = c.SendOverflow ??= new byte[Math.Max(1, _plan.SendBatch) * _plan.PacketLength];
        frame[sent..].CopyTo(overflow);
        ClientSocketEventArgs args = _sendArgs[slot] ??= new ClientSocketEventArgs(this, slot, sends: true);
        args.SetBuffer(overflow, 0, frame.Length - sent);
        return SendOverflow(slot, args);
    }

    /// <summary>Sends what <paramref name="args"/> describes until it pends (true) or is done or failed (false).</summary>
    private bool SendOverflow(int slot, ClientSocketEventArgs args)
    {
        Socket socket = _connections[slot].Socket!;
        while (true)
        {
            try
            {
                if (socket.SendAsync(args))
                {
                    return true;
                }
            }
            catch (ObjectDisposedException)
            {
                Close(slot, errno: 0);
                return false;
            }

            if (!OverflowLeft(slot, args))
            {
                return false;
            }
        }
    }

    /// <summary>After an overflow send completed: true when bytes remain (the buffer is advanced past the sent ones).</summary>
    private bool OverflowLeft(int slot, ClientSocketEventArgs args)
    {
        if (args.SocketError != SocketError.Success)
        {
            Close(slot, args.SocketError == SocketError.OperationAborted ? 0 : SocketErrno.Of(args.SocketError));
            return false;
        }

        int sent = args.BytesTransferred;
        if (sent < args.Count)
        {
            args.SetBuffer(args.Offset + sent, args.Count - sent);
            return true;
        }

        return false;
    }
}
