// The receive side of a shard: [id][payload] messages become connection events or packets.
using System.Buffers.Binary;
using System.Diagnostics;
using NetZlink.Interop;

namespace NetZlink.Engine;

public sealed unsafe partial class EngineShard
{
    private bool ReceiveBatch()
    {
        byte* id = stackalloc byte[4];
        int messages = 0;
        fixed (byte* buffer = _receiveBuffer)
        {
            while (messages < MaxMessagesPerPass && !_receivePaused)
            {
                int idLength = NativeMethods.zlink_recv(_socket, id, 4, ZlinkConstants.ZLINK_DONTWAIT);
                if (idLength < 0)
                {
                    if (!RecoverableReceiveError(NativeMethods.zlink_errno(), "routing id"))
                    {
                        break;
                    }

                    continue;
                }

                messages++;
                int length = NativeMethods.zlink_recv(_socket, buffer, (nuint)_receiveBuffer.Length, ZlinkConstants.ZLINK_DONTWAIT);
                if (length < 0)
                {
                    // The id frame was consumed; a missing payload (should not happen) is skipped.
                    _ = RecoverableReceiveError(NativeMethods.zlink_errno(), "payload");
                    continue;
                }

                uint routingId = idLength == 4 ? BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(id, 4)) : 0;
                int slot = Lookup(routingId, idLength);
                if (slot < 0)
                {
                    if (_accepting && idLength == 4 && length == 1 && buffer[0] == 1)
                    {
                        Accept(routingId);
                    }

                    continue;
                }

                if (length == 0)
                {
                    continue;
                }

                if (length > _receiveBuffer.Length)
                {
                    // The native library delivered a frame larger than the buffer and truncated it:
                    // the stream of that connection can no longer be trusted.
                    ProtocolError(slot);
                    continue;
                }

                ref ConnectionSlot s = ref _slots[slot];
                if (length == 1 && s.State != ConnectionState.Connected)
                {
                    OnConnectionEvent(slot, buffer[0]);
                }
                else if (length == 1 && buffer[0] == 0)
                {
                    OnRemoteClose(slot);
                }
                else if (s.State == ConnectionState.Connected)
                {
                    Counters.BytesReceived += length;
                    Dispatch(slot, new ReadOnlySpan<byte>(buffer, length));
                }
            }
        }

        return messages > 0;
    }

    /// <summary>True when the loop should go on, false when nothing more is there (or the context is gone).</summary>
    private bool RecoverableReceiveError(int errno, string frame)
    {
        if (errno == ZlinkConstants.EAGAIN)
        {
            return false;
        }

        if (errno == ZlinkConstants.ETERM)
        {
            _stopRequested = true;
            return false;
        }

        if (errno == ZlinkConstants.EINTR)
        {
            return true;
        }

        EngineErrors.Throw($"zlink_recv ({frame}) on shard {Index}", errno);
        return false;
    }

    /// <summary>The slot a routing id names, or -1 for an id of an earlier attempt or of nobody.</summary>
    private int Lookup(uint routingId, int idLength)
    {
        if (idLength != 4)
        {
            return -1;
        }

        if (_accepting)
        {
            return _slotById!.TryGetValue(routingId, out int accepted) ? accepted : -1;
        }

        int slot = (int)(routingId & 0x00FF_FFFF);
        return slot < _slots.Length && _slots[slot].RoutingId == routingId ? slot : -1;
    }

    private void OnConnectionEvent(int slot, byte code)
    {
        ref ConnectionSlot s = ref _slots[slot];
        if (s.State != ConnectionState.Connecting)
        {
            return;
        }

        if (code == 1)
        {
            Debug.Assert(s.Partial.IsEmpty && s.Partial.Buffer is null && s.Pending is null, "a new connection starts with empty buffers");
            _attemptsInFlight--;
            s.State = ConnectionState.Connected;
            Counters.Connected++;
            _handler.OnConnected(this, ConnectionAt(slot));
            ConnectResolved();
        }
        else
        {
            AttemptFailed(slot, timedOut: false, errno: LastConnectErrno(s.RoutingId));
        }
    }

    private void OnRemoteClose(int slot) => EndConnection(slot, ConnectionEndReason.Remote);

    private void ProtocolError(int slot)
    {
        Counters.ProtocolErrors++;
        CloseNative(_slots[slot].RoutingId);
        EndConnection(slot, ConnectionEndReason.ProtocolError);
    }

    private void EndConnection(int slot, ConnectionEndReason reason)
    {
        ref ConnectionSlot s = ref _slots[slot];
        Debug.Assert(s.State == ConnectionState.Connected, "only an established connection can end");
        int lost = s.Partial.Length;
        Counters.LostPartialBytes += lost;
        Counters.Disconnects++;
        ReturnBuffers(ref s, slot, stopping: false);
        s.State = ConnectionState.Closed;
        try
        {
            _handler.OnDisconnected(this, ConnectionAt(slot), reason, lost);
        }
        finally
        {
            if (_accepting)
            {
                _slotById!.Remove(s.RoutingId);
                _freeSlots!.Push(slot);
            }
        }
    }

    /// <summary>Cuts packets out of one read and hands each whole packet to the handler.</summary>
    private void Dispatch(int slot, ReadOnlySpan<byte> data)
    {
        if (_raw)
        {
            _ = DeliverPacket(slot, data);
            return;
        }

        var delivery = new PacketDelivery(this, slot);
        if (_reassembler!.Feed(ref _slots[slot].Partial, data, ref delivery) == ReassemblyResult.ProtocolError)
        {
            ProtocolError(slot);
        }
    }

    /// <summary>Counts a whole packet and hands it to the handler; false when the handler ended the connection.</summary>
    private bool DeliverPacket(int slot, ReadOnlySpan<byte> packet)
    {
        Counters.PacketsReceived++;
        _handler.OnPacket(this, ConnectionAt(slot), packet);
        return _slots[slot].State == ConnectionState.Connected;
    }

    /// <summary>The reassembler's sink for one connection of this shard.</summary>
    private readonly struct PacketDelivery(EngineShard shard, int slot) : IPacketSink
    {
        public bool OnPacket(ReadOnlySpan<byte> packet) => shard.DeliverPacket(slot, packet);
    }
}
