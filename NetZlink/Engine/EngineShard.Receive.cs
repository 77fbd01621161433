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
            while (messages < MaxMessagesPerPass)
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

                int slot = Lookup(idLength == 4 ? BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(id, 4)) : 0, idLength);
                if (slot < 0 || length == 0)
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
            Debug.Assert(s.Partial is null && s.Pending is null, "a new connection starts with empty buffers");
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
        int lost = s.PartialLength;
        Counters.LostPartialBytes += lost;
        Counters.Disconnects++;
        ReturnBuffers(ref s);
        s.State = ConnectionState.Closed;
        if (_selectedSlot == slot)
        {
            _selectedSlot = -1;
        }

        _handler.OnDisconnected(this, ConnectionAt(slot), reason, lost);
    }

    /// <summary>Cuts packets out of one read and hands each whole packet to the handler.</summary>
    private void Dispatch(int slot, ReadOnlySpan<byte> data)
    {
        ref ConnectionSlot s = ref _slots[slot];
        Connection connection = ConnectionAt(slot);
        if (s.PartialLength > 0 && !CompletePartial(slot, ref data))
        {
            return;
        }

        int header = _framer.HeaderSize;
        while (data.Length >= header)
        {
            int packet = _framer.GetPacketLength(data);
            if (packet < header || packet > _options.MaxPacketSize)
            {
                ProtocolError(slot);
                return;
            }

            if (packet > data.Length)
            {
                break;
            }

            Counters.PacketsReceived++;
            _handler.OnPacket(this, connection, data[..packet]);
            if (_slots[slot].State != ConnectionState.Connected)
            {
                return;
            }

            data = data[packet..];
        }

        if (!data.IsEmpty)
        {
            int expected = data.Length >= header ? _framer.GetPacketLength(data) : 0;
            s.Partial = _pool.Rent(Math.Max(expected, Math.Max(header, 256)));
            data.CopyTo(s.Partial);
            s.PartialLength = data.Length;
            s.PartialExpected = expected;
        }
    }

    /// <summary>
    /// Adds the start of <paramref name="data"/> to the packet held for the slot; when it is
    /// complete, dispatches it and leaves the rest in <paramref name="data"/>. False when the data
    /// ran out first or the connection was closed.
    /// </summary>
    private bool CompletePartial(int slot, ref ReadOnlySpan<byte> data)
    {
        ref ConnectionSlot s = ref _slots[slot];
        int header = _framer.HeaderSize;
        if (s.PartialExpected == 0)
        {
            int headerPart = Math.Min(header - s.PartialLength, data.Length);
            data[..headerPart].CopyTo(s.Partial.AsSpan(s.PartialLength));
            s.PartialLength += headerPart;
            data = data[headerPart..];
            if (s.PartialLength < header)
            {
                return false;
            }

            int expected = _framer.GetPacketLength(s.Partial.AsSpan(0, header));
            if (expected < header || expected > _options.MaxPacketSize)
            {
                ProtocolError(slot);
                return false;
            }

            s.PartialExpected = expected;
            if (s.Partial!.Length < expected)
            {
                byte[] larger = _pool.Rent(expected);
                s.Partial.AsSpan(0, s.PartialLength).CopyTo(larger);
                _pool.Return(s.Partial);
                s.Partial = larger;
            }
        }

        int take = Math.Min(s.PartialExpected - s.PartialLength, data.Length);
        data[..take].CopyTo(s.Partial.AsSpan(s.PartialLength));
        s.PartialLength += take;
        data = data[take..];
        if (s.PartialLength < s.PartialExpected)
        {
            return false;
        }

        byte[] whole = s.Partial!;
        int length = s.PartialLength;
        s.Partial = null;
        s.PartialLength = 0;
        s.PartialExpected = 0;
        Counters.PacketsReceived++;
        _handler.OnPacket(this, ConnectionAt(slot), whole.AsSpan(0, length));
        _pool.Return(whole);
        return _slots[slot].State == ConnectionState.Connected;
    }
}
