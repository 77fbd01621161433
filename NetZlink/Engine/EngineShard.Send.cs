// The send side of a shard: one [id] + [payload] multipart per frame, speculative, never blocking.
//
// A STREAM send is two native calls, [id] (SNDMORE) then [payload]. When either is refused
// (EAGAIN: that connection's queue is at SNDHWM; NetZlink's library refuses the payload, a real
// zlink 1.3 the id) nothing stays selected in the socket, so every try, first or retry, sends
// both frames: the next id frame can never become payload bytes of a stalled connection.
//
// In Batch and Raw framing a frame is one payload (Batch: whole packets, checked before they go).
// In the Length fallback each packet of a frame is its own message, [id][body]: a refusal part
// way through keeps the packets not yet sent, and only those, for the retry.
using System.Buffers.Binary;
using System.Diagnostics;
using NetZlink.Interop;

namespace NetZlink.Engine;

public sealed unsafe partial class EngineShard
{
    private readonly List<int> _pendingSends;

    /// <summary>
    /// Sends one frame (one or more whole packets) to a connection of this shard. Call on the
    /// shard's thread only (from a handler callback); other threads use <see cref="StreamEngine.TrySend"/> or <see cref="StreamEngine.SendAsync"/>.
    /// Never blocks and never throws for a closed connection or a full queue.
    /// </summary>
    /// <exception cref="ArgumentException">With the default framer (<see cref="LengthPrefixFramer"/>): the frame is
    /// not whole packets with bodies of at least one byte, which the native framing cannot send (nothing was taken).</exception>
    public SendResult Send(Connection connection, ReadOnlySpan<byte> frame)
    {
        Debug.Assert(connection.Shard == Index, "a shard sends only to its own connections");
        RequireShardThread(nameof(Send));
        if (FrameProblem(frame) is string problem)
        {
            throw new ArgumentException(problem, nameof(frame));
        }

        return SendCore(connection.Slot, frame, posted: false);
    }

    /// <summary>Null when the socket's framing can send <paramref name="frame"/> (always, in Raw); else why not.</summary>
    internal string? FrameProblem(ReadOnlySpan<byte> frame)
        => _lengthPrefixed && !frame.IsEmpty ? PacketFrames.Problem(frame, _framing == NativeFraming.Length) : null;

    /// <summary>
    /// Sends or holds a frame. A posted frame is bounded by the posting capacity already, so only
    /// the handler's own frames meet <see cref="EngineOptions.MaxPendingBytesPerConnection"/>.
    /// </summary>
    private SendResult SendCore(int slot, ReadOnlySpan<byte> frame, bool posted)
    {
        ref ConnectionSlot s = ref _slots[slot];
        if (s.State != ConnectionState.Connected)
        {
            return SendResult.Closed;
        }

        if (frame.IsEmpty)
        {
            // An empty payload would close a STREAM connection: never send one by accident.
            return SendResult.Sent;
        }

        if (s.PendingLength > 0)
        {
            return AppendPending(slot, frame, posted);
        }

        SendResult result = TrySendNative(slot, frame, out int taken);
        return result == SendResult.Queued ? AppendPending(slot, frame[taken..], posted) : result;
    }

    /// <summary>Closes a connection of this shard; the handler's OnDisconnected runs before this returns.</summary>
    public void Close(Connection connection)
    {
        Debug.Assert(connection.Shard == Index, "a shard closes only its own connections");
        RequireShardThread(nameof(Close));
        if (_slots[connection.Slot].State != ConnectionState.Connected)
        {
            return;
        }

        CloseNative(_slots[connection.Slot].RoutingId);
        EndConnection(connection.Slot, ConnectionEndReason.Local);
    }

    /// <summary>
    /// Closes a connection that does not keep up with what is sent to it (a slow consumer): the
    /// output still queued for it, in the engine and in the native socket, is discarded; a ws:// or
    /// wss:// peer gets a WebSocket close frame with <paramref name="closeCode"/> (default 1008,
    /// policy violation; reason "slow consumer") after the last whole message, then an orderly TCP
    /// end rather than a reset. The handler's OnDisconnected runs, with
    /// <see cref="ConnectionEndReason.SlowConsumer"/>, before this returns. On a library without
    /// NetZlink's drop option (a zlink 1.3 build) the connection is closed as by <see cref="Close"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="closeCode"/> is not a code an endpoint may send
    /// (1000-1003, 1007-1014 or 3000-4999).</exception>
    public void DropSlowConsumer(Connection connection, ushort closeCode = 1008)
    {
        Debug.Assert(connection.Shard == Index, "a shard drops only its own connections");
        if (!(closeCode is >= 1000 and <= 1003 or >= 1007 and <= 1014 or >= 3000 and <= 4999))
        {
            throw new ArgumentOutOfRangeException(nameof(closeCode), closeCode, "a WebSocket close code an endpoint may send: 1000-1003, 1007-1014 or 3000-4999");
        }

        RequireShardThread(nameof(DropSlowConsumer));
        if (_slots[connection.Slot].State != ConnectionState.Connected)
        {
            return;
        }

        StreamFrames.RequestDrop(_socket, _slots[connection.Slot].RoutingId, closeCode, _framing);
        EndConnection(connection.Slot, ConnectionEndReason.SlowConsumer);
    }

    /// <summary>
    /// One try: Sent, Queued (the socket refused; the caller keeps the frame from byte
    /// <paramref name="taken"/> on) or Closed. <paramref name="taken"/> is 0 but in the Length
    /// fallback, where it is the whole packets that went out before the refusal.
    /// </summary>
    private SendResult TrySendNative(int slot, ReadOnlySpan<byte> frame, out int taken)
    {
        taken = 0;
        if (_framing == NativeFraming.Length)
        {
            return TrySendBodies(slot, frame, out taken);
        }

        SendResult result = TrySendMessage(_slots[slot].RoutingId, frame);
        if (result == SendResult.Sent)
        {
            Counters.FramesSent++;
            Counters.BytesSent += frame.Length;
        }

        return result;
    }

    /// <summary>Length: each packet's body as its own message, in order, until one is refused.</summary>
    private SendResult TrySendBodies(int slot, ReadOnlySpan<byte> frame, out int taken)
    {
        const int header = LengthPrefixFramer.Size;
        uint routingId = _slots[slot].RoutingId;
        taken = 0;
        while (taken < frame.Length)
        {
            // The frame was checked whole when it was handed over.
            int packet = header + (int)BinaryPrimitives.ReadUInt32BigEndian(frame[taken..]);
            SendResult result = TrySendMessage(routingId, frame.Slice(taken + header, packet - header));
            if (result != SendResult.Sent)
            {
                return result;
            }

            taken += packet;
            Counters.BytesSent += packet;
        }

        Counters.FramesSent++;
        return SendResult.Sent;
    }

    /// <summary>[id] then one payload: Sent, Queued (refused at the high-water mark) or Closed.</summary>
    private SendResult TrySendMessage(uint routingId, ReadOnlySpan<byte> payload)
    {
        if (!StreamFrames.SendRoutingId(_socket, routingId))
        {
            return SendFailure(Native.Errno(), "routing id");
        }

        int rc;
        fixed (byte* p = payload)
        {
            rc = Native.Send(_socket, p, (nuint)payload.Length, ZlinkConstants.ZLINK_DONTWAIT);
        }

        return rc < 0 ? SendFailure(Native.Errno(), "payload") : SendResult.Sent;
    }

    private SendResult SendFailure(int errno, string frame)
    {
        if (errno == ZlinkConstants.EAGAIN)
        {
            return SendResult.Queued;
        }

        if (errno == ZlinkConstants.EHOSTUNREACH)
        {
            // The connection is gone; its [id][0x00] is on its way and will end the slot.
            return SendResult.Closed;
        }

        if (errno == ZlinkConstants.ETERM)
        {
            _stopRequested = true;
            return SendResult.Closed;
        }

        EngineErrors.Throw($"zlink_send ({frame}) on shard {Index}", errno);
        return SendResult.Closed;
    }

    private SendResult AppendPending(int slot, ReadOnlySpan<byte> frame, bool posted)
    {
        ref ConnectionSlot s = ref _slots[slot];
        int needed = s.PendingLength + frame.Length;
        int ownHeld = s.PendingLength - s.PendingPostedBytes;
        if (!posted && ownHeld > 0 && ownHeld + frame.Length > _options.MaxPendingBytesPerConnection)
        {
            // A frame larger than the bound is held when none of the handler's own is (docs/engine.md, "Frame sizes").
            ObserveSendRefused(slot);
            return SendResult.Full;
        }

        if (s.Pending is null || s.Pending.Length < needed)
        {
            byte[] larger = _pool.Rent(Math.Max(needed, 4096));
            if (s.Pending is not null)
            {
                s.Pending.AsSpan(0, s.PendingLength).CopyTo(larger);
                _pool.Return(s.Pending);
            }

            s.Pending = larger;
        }

        if (s.PendingLength == 0)
        {
            _pendingSends.Add(slot);
            ObserveSlowPeer(slot);
        }

        frame.CopyTo(s.Pending.AsSpan(s.PendingLength));
        s.PendingLength = needed;
        Counters.FramesQueued++;
        return SendResult.Queued;
    }

    /// <summary>Offers each held frame buffer to the socket again; true when anything went out.</summary>
    private bool RetryPendingSends()
    {
        if (_pendingSends.Count == 0)
        {
            return false;
        }

        bool progressed = false;
        for (int i = _pendingSends.Count - 1; i >= 0; i--)
        {
            int slot = _pendingSends[i];
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State == ConnectionState.Connected && s.PendingLength > 0)
            {
                SendResult result = TrySendNative(slot, s.Pending.AsSpan(0, s.PendingLength), out int taken);
                if (result == SendResult.Queued)
                {
                    if (taken > 0)
                    {
                        // Length: the packets that went out leave the buffer; posted frames among
                        // them are settled with the rest, once it is all out.
                        s.Pending.AsSpan(taken, s.PendingLength - taken).CopyTo(s.Pending);
                        s.PendingLength -= taken;
                        progressed = true;
                    }

                    continue;
                }

                progressed |= result == SendResult.Sent;
                if (result == SendResult.Closed)
                {
                    continue;
                }

                SettlePendingPosts(ref s, slot, sent: true, stopping: false);
                _pool.Return(s.Pending!);
                s.Pending = null;
                s.PendingLength = 0;
            }

            _pendingSends[i] = _pendingSends[^1];
            _pendingSends.RemoveAt(_pendingSends.Count - 1);
        }

        return progressed;
    }

    /// <summary>Asks the socket to close a connection; errors mean it is gone already.</summary>
    private void CloseNative(uint routingId)
    {
        StreamFrames.RequestClose(_socket, routingId, _framing);
    }
}
