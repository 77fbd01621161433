// The send side of a shard: one [id] + [payload] multipart per frame, speculative, never blocking.
//
// A STREAM send is two native calls, [id] (SNDMORE) then [payload]. When either is refused
// (EAGAIN: that connection's queue is at SNDHWM; NetZlink's library refuses the payload, a real
// zlink 1.3 the id) nothing stays selected in the socket, so every try, first or retry, sends
// both frames: the next id frame can never become payload bytes of a stalled connection.
using System.Buffers.Binary;
using System.Diagnostics;
using NetZlink.Interop;

namespace NetZlink.Engine;

public sealed unsafe partial class EngineShard
{
    private readonly List<int> _pendingSends;

    /// <summary>
    /// Sends one frame (one or more whole packets) to a connection of this shard. Call on the
    /// shard's thread only (from a handler callback); other threads use <see cref="StreamEngine.TryPost"/> or <see cref="StreamEngine.PostAsync"/>.
    /// Never blocks and never throws for a closed connection or a full queue.
    /// </summary>
    public SendResult Send(Connection connection, ReadOnlySpan<byte> frame)
    {
        Debug.Assert(connection.Shard == Index, "a shard sends only to its own connections");
        return SendCore(connection.Slot, frame, posted: false);
    }

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

        SendResult result = TrySendNative(slot, frame);
        return result == SendResult.Queued ? AppendPending(slot, frame, posted) : result;
    }

    /// <summary>Closes a connection of this shard; the handler's OnDisconnected runs before this returns.</summary>
    public void Close(Connection connection)
    {
        Debug.Assert(connection.Shard == Index, "a shard closes only its own connections");
        if (_slots[connection.Slot].State != ConnectionState.Connected)
        {
            return;
        }

        CloseNative(_slots[connection.Slot].RoutingId);
        EndConnection(connection.Slot, ConnectionEndReason.Local);
    }

    /// <summary>One try: Sent, Queued (the socket refused the payload; the caller keeps it) or Closed.</summary>
    private SendResult TrySendNative(int slot, ReadOnlySpan<byte> frame)
    {
        if (!StreamFrames.SendRoutingId(_socket, _slots[slot].RoutingId))
        {
            return SendFailure(NativeMethods.zlink_errno(), "routing id");
        }

        int rc;
        fixed (byte* payload = frame)
        {
            rc = NativeMethods.zlink_send(_socket, payload, (nuint)frame.Length, ZlinkConstants.ZLINK_DONTWAIT);
        }

        if (rc < 0)
        {
            return SendFailure(NativeMethods.zlink_errno(), "payload");
        }

        Counters.FramesSent++;
        Counters.BytesSent += frame.Length;
        return SendResult.Sent;
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
        if (!posted && needed - s.PendingPostedBytes > _options.MaxPendingBytesPerConnection)
        {
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
                SendResult result = TrySendNative(slot, s.Pending.AsSpan(0, s.PendingLength));
                if (result == SendResult.Queued)
                {
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

    /// <summary>Asks the socket to close a connection ([id] + empty payload); errors mean it is gone already.</summary>
    private void CloseNative(uint routingId)
    {
        StreamFrames.RequestClose(_socket, routingId);
    }
}
