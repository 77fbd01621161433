// The receive side of a shard: [id][payload] messages become connection events or packets, in
// the socket's native framing (NativeFraming):
//   - Batch: a payload is whole packets; they are cut by their headers and handed on in place. A
//     first packet larger than the receive buffer is not taken: the payload comes again and is
//     read into a pooled buffer that large. An empty payload carries nothing.
//   - Length: a payload is one body, read 4 bytes into the receive buffer so that its header can
//     be written in front of it; when the framer's largest body does not fit the buffer, the body
//     is read as a zlink message and copied (into a pooled buffer when it is larger).
//   - Raw: a payload is bytes as they arrived, cut by the framer's PacketReassembler or handed on
//     as they are (RawStreamFramer); an empty payload is a connection event, which
//     ZLINK_STREAM_EVENT names.
// Batch and Length connection events are the one-byte payloads 0x01/0x00 (in Length a one-byte
// body looks the same: ZLINK_STREAM_EVENT tells them apart where the library has it). A
// disconnect whose cause (ZLINK_STREAM_EVENT_ERRNO) is EMSGSIZE or EPROTO is the peer's protocol
// error: the library dropped a connection that announced a body over MAXMSGSIZE, or an empty one.
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
                int idLength = Native.Receive(_socket, id, 4, ZlinkConstants.ZLINK_DONTWAIT);
                if (idLength < 0)
                {
                    if (!RecoverableReceiveError(Native.Errno(), "routing id"))
                    {
                        break;
                    }

                    continue;
                }

                messages++;
                uint routingId = idLength == 4 ? BinaryPrimitives.ReadUInt32BigEndian(new ReadOnlySpan<byte>(id, 4)) : 0;
                switch (_framing)
                {
                    case NativeFraming.Batch:
                        ReceivePackets(routingId, idLength, buffer);
                        break;
                    case NativeFraming.Length:
                        ReceiveBody(routingId, idLength, buffer);
                        break;
                    default:
                        ReceiveBytes(routingId, idLength, buffer);
                        break;
                }
            }
        }

        return messages > 0;
    }

    /// <summary>Batch: the payload is whole packets (or an event, or nothing yet).</summary>
    private void ReceivePackets(uint routingId, int idLength, byte* buffer)
    {
        int capacity = _receiveBuffer.Length;
        int length = Native.Receive(_socket, buffer, (nuint)capacity, ZlinkConstants.ZLINK_DONTWAIT);
        if (length < 0)
        {
            // The id frame was consumed; a missing payload (should not happen) is skipped.
            _ = RecoverableReceiveError(Native.Errno(), "payload");
            return;
        }

        int slot = Lookup(routingId, idLength);
        if (length == 1)
        {
            OnEvent(routingId, idLength, slot, buffer[0]);
            return;
        }

        if (length <= capacity)
        {
            // Empty: no whole packet yet.
            if (length > 0 && IsConnectedSlot(slot))
            {
                DeliverPackets(slot, new ReadOnlySpan<byte>(buffer, length));
            }

            return;
        }

        // The first packet is larger than the buffer: nothing was taken, and the same payload is
        // the next frame. Take it whatever its connection (else it would be read as an id frame).
        byte[] large = _pool.Rent(length);
        try
        {
            int taken;
            fixed (byte* p = large)
            {
                taken = Native.Receive(_socket, p, (nuint)large.Length, ZlinkConstants.ZLINK_DONTWAIT);
            }

            if (taken < 0)
            {
                _ = RecoverableReceiveError(Native.Errno(), "payload (again, into a larger buffer)");
            }
            else if (IsConnectedSlot(slot))
            {
                if (taken > large.Length)
                {
                    ProtocolError(slot);
                }
                else
                {
                    DeliverPackets(slot, large.AsSpan(0, taken));
                }
            }
        }
        finally
        {
            _pool.Return(large);
        }
    }

    /// <summary>Length: the payload is one body (or an event); the packet is rebuilt with its header in front.</summary>
    private void ReceiveBody(uint routingId, int idLength, byte* buffer)
    {
        const int header = LengthPrefixFramer.Size;
        int room = _receiveBuffer.Length - header;
        if (_maxBody > room)
        {
            ReceiveBodyAsMessage(routingId, idLength, buffer);
            return;
        }

        int length = Native.Receive(_socket, buffer + header, (nuint)room, ZlinkConstants.ZLINK_DONTWAIT);
        if (length < 0)
        {
            _ = RecoverableReceiveError(Native.Errno(), "payload");
            return;
        }

        // A body longer than the room was cut, but it is longer than the largest body too: the
        // library applies MAXMSGSIZE, so this is only a second line of defence.
        OnBody(routingId, idLength, new Span<byte>(buffer, header + Math.Min(length, room)), length);
    }

    /// <summary>Length, when the largest body may not fit the receive buffer: the body as a zlink message, never cut.</summary>
    private void ReceiveBodyAsMessage(uint routingId, int idLength, byte* buffer)
    {
        const int header = LengthPrefixFramer.Size;
        ZlinkMsg message;
        _ = Native.MsgInit(&message);
        try
        {
            if (Native.MsgReceive(&message, _socket, ZlinkConstants.ZLINK_DONTWAIT) < 0)
            {
                _ = RecoverableReceiveError(Native.Errno(), "payload");
                return;
            }

            int length = (int)Native.MsgSize(&message);
            var body = new ReadOnlySpan<byte>(Native.MsgData(&message), length);
            if (header + length <= _receiveBuffer.Length)
            {
                body.CopyTo(new Span<byte>(buffer + header, length));
                OnBody(routingId, idLength, new Span<byte>(buffer, header + length), length);
            }
            else if (length > _maxBody)
            {
                // Not copied: the connection ends as a protocol error.
                OnBody(routingId, idLength, new Span<byte>(buffer, header), length);
            }
            else
            {
                byte[] large = _pool.Rent(header + length);
                try
                {
                    body.CopyTo(large.AsSpan(header));
                    OnBody(routingId, idLength, large.AsSpan(0, header + length), length);
                }
                finally
                {
                    _pool.Return(large);
                }
            }
        }
        finally
        {
            _ = Native.MsgClose(&message);
        }
    }

    /// <summary>
    /// Length: one received body of <paramref name="bodyLength"/> bytes, in <paramref name="packet"/>
    /// after 4 free bytes for its header (the body itself is left out when it is too long to keep).
    /// </summary>
    private void OnBody(uint routingId, int idLength, Span<byte> packet, int bodyLength)
    {
        int slot = Lookup(routingId, idLength);
        if (bodyLength == 1 && IsEventByte(slot, packet[LengthPrefixFramer.Size]))
        {
            OnEvent(routingId, idLength, slot, packet[LengthPrefixFramer.Size]);
            return;
        }

        if (!IsConnectedSlot(slot))
        {
            return;
        }

        if (bodyLength == 0 || bodyLength < _minBody || bodyLength > _maxBody || packet.Length != LengthPrefixFramer.Size + bodyLength)
        {
            // An empty body (a real zlink hands it on; NetZlink's library drops such a connection
            // itself), or one the framer or MaxPacketSize refuses.
            ProtocolError(slot);
            return;
        }

        BinaryPrimitives.WriteUInt32BigEndian(packet, (uint)bodyLength);
        Counters.BytesReceived += packet.Length;
        _ = DeliverPacket(slot, packet);
    }

    /// <summary>
    /// Length: whether a one-byte payload is a connection event rather than a one-byte body. The
    /// library says so where it has ZLINK_STREAM_EVENT; a zlink 1.3 library does not, and then the
    /// byte can only be guessed: an event unless its connection is established and the byte is
    /// 0x01 (a connection announces itself once). A one-byte body 0x00 from the peer of such a
    /// library therefore ends the connection (docs/engine.md, "The native framing").
    /// </summary>
    private bool IsEventByte(int slot, byte value)
    {
        if (_eventOption)
        {
            return ReadIntOption(ZlinkConstants.ZLINK_STREAM_EVENT, ZlinkConstants.ZLINK_STREAM_EVENT_DATA) != ZlinkConstants.ZLINK_STREAM_EVENT_DATA;
        }

        return !IsConnectedSlot(slot) || value == 0;
    }

    /// <summary>Raw: the payload is bytes as they arrived, or (empty) a connection event.</summary>
    private void ReceiveBytes(uint routingId, int idLength, byte* buffer)
    {
        int length = Native.Receive(_socket, buffer, (nuint)_receiveBuffer.Length, ZlinkConstants.ZLINK_DONTWAIT);
        if (length < 0)
        {
            _ = RecoverableReceiveError(Native.Errno(), "payload");
            return;
        }

        int slot = Lookup(routingId, idLength);
        if (length == 0)
        {
            int kind = ReadIntOption(ZlinkConstants.ZLINK_STREAM_EVENT, ZlinkConstants.ZLINK_STREAM_EVENT_DATA);
            if (kind is ZlinkConstants.ZLINK_STREAM_EVENT_CONNECT or ZlinkConstants.ZLINK_STREAM_EVENT_DISCONNECT)
            {
                OnEvent(routingId, idLength, slot, kind);
            }

            return;
        }

        if (!IsConnectedSlot(slot))
        {
            return;
        }

        if (length > _receiveBuffer.Length)
        {
            // RAW never cuts a payload; a library that did leaves a stream that cannot be trusted.
            ProtocolError(slot);
            return;
        }

        Counters.BytesReceived += length;
        Dispatch(slot, new ReadOnlySpan<byte>(buffer, length));
    }

    /// <summary>True when <paramref name="slot"/> names an established connection (-1 names none).</summary>
    private bool IsConnectedSlot(int slot) => slot >= 0 && _slots[slot].State == ConnectionState.Connected;

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
            if (!_slotById!.TryGetValue(routingId, out int accepted))
            {
                return -1;
            }

            _slots[accepted].LastReceiveTicks = _passTicks;
            return accepted;
        }

        int slot = (int)(routingId & 0x00FF_FFFF);
        if (slot >= _slots.Length || _slots[slot].RoutingId != routingId)
        {
            return -1;
        }

        // Anything from the peer (packets, bytes, its end) shows it is alive: IdleTimeout.
        _slots[slot].LastReceiveTicks = _passTicks;
        return slot;
    }

    /// <summary>A connection event, <paramref name="code"/> 1 (up) or 0 (gone), for the connection the id names.</summary>
    private void OnEvent(uint routingId, int idLength, int slot, int code)
    {
        if (slot < 0)
        {
            if (_accepting && idLength == 4 && code == 1)
            {
                Accept(routingId);
            }

            return;
        }

        ConnectionState state = _slots[slot].State;
        if (state == ConnectionState.Connecting)
        {
            OnConnectionEvent(slot, code);
        }
        else if (state == ConnectionState.Connected && code == 0)
        {
            OnRemoteClose(slot);
        }
    }

    private void OnConnectionEvent(int slot, int code)
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
            s.Transition(ConnectionState.Connected);
            s.ReconnectRound = 0;
            s.LastReceiveTicks = Stopwatch.GetTimestamp();
            Volatile.Write(ref s.Life, s.Life + 1);
            s.PostsSentLive = 0;
            s.DrainClosing = s.DrainFlushed = false;
            Counters.Connected++;
            ObserveConnected(slot);
            _handler.OnConnected(this, ConnectionAt(slot));
            ConnectResolved();
        }
        else
        {
            // The library's cause of the final failure (read before anything else is received),
            // else what the monitor heard.
            int errno = EventErrno();
            int monitored = LastConnectErrno(s.RoutingId);
            AttemptFailed(slot, timedOut: false, errno: errno != 0 ? errno : monitored);
        }
    }

    /// <summary>The connection's 0x00: a protocol error when the library dropped it for one, else the peer's (or the transport's) end.</summary>
    private void OnRemoteClose(int slot)
    {
        int cause = EventErrno();
        if (_slots[slot].DrainClosing)
        {
            DrainCloseEnded(slot, cause);
            return;
        }

        if (cause == ZlinkConstants.ENOBUFS)
        {
            // The library dropped it: its incomplete packet would have taken the socket's receive
            // buffers past ZLINK_STREAM_RCVBUDGET (ReceiveBudgetPerShard).
            Counters.ReceiveBudgetExceeded++;
            EndConnection(slot, ConnectionEndReason.ReceiveBudgetExceeded);
            return;
        }

        if (cause is ZlinkConstants.EMSGSIZE or ZlinkConstants.EPROTO)
        {
            // The library has closed it already: nothing to ask of the socket.
            Counters.ProtocolErrors++;
            EndConnection(slot, ConnectionEndReason.ProtocolError);
            return;
        }

        if (_framing == NativeFraming.Length && !_eventOption)
        {
            // Without ZLINK_STREAM_EVENT this 0x00 may have been a one-byte body: make sure the
            // connection the engine now ends is closed in the library too (a no-op if it is gone).
            CloseNative(_slots[slot].RoutingId);
        }

        EndConnection(slot, ConnectionEndReason.Remote);
    }

    /// <summary>ZLINK_STREAM_EVENT_ERRNO of the disconnect just received; 0 when the library has no such option.</summary>
    private int EventErrno() => _eventOption ? ReadIntOption(ZlinkConstants.ZLINK_STREAM_EVENT_ERRNO, 0) : 0;

    /// <summary>An int option of the shard's socket, or <paramref name="otherwise"/> when the library refuses it.</summary>
    private int ReadIntOption(int option, int otherwise)
    {
        int value = 0;
        nuint size = sizeof(int);
        return Native.GetOption(_socket, option, &value, &size) == 0 ? value : otherwise;
    }

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
        DrainConnectionLost(ref s);
        ObserveDisconnected(slot, reason);
        ReturnBuffers(ref s, slot, stopping: false);
        s.Transition(ConnectionState.Closed);
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

        MaybeReconnect(slot, reason);
    }

    /// <summary>
    /// Batch: hands each whole packet of a payload to the handler, in place. Each header is checked
    /// against the framer as before; a payload that is not whole packets (which the library never
    /// gives) is a protocol error like a header the framer refuses.
    /// </summary>
    private void DeliverPackets(int slot, ReadOnlySpan<byte> packets)
    {
        const int header = LengthPrefixFramer.Size;
        Counters.BytesReceived += packets.Length;
        if (_handlerTakesRuns)
        {
            DeliverRun(slot, packets);
            return;
        }

        while (!packets.IsEmpty)
        {
            if (packets.Length < header)
            {
                ProtocolError(slot);
                return;
            }

            uint body = BinaryPrimitives.ReadUInt32BigEndian(packets);
            if (body < (uint)_minBody || body > (uint)_maxBody || body > (uint)(packets.Length - header))
            {
                ProtocolError(slot);
                return;
            }

            int length = header + (int)body;
            if (!DeliverPacket(slot, packets[..length]))
            {
                return;
            }

            packets = packets[length..];
        }
    }

    /// <summary>
    /// Batch, for a handler that overrides OnPackets: the run of valid packets at the start of the
    /// payload goes to the handler in one call (every one of them counted), then a bad header
    /// ends the connection as a protocol error.
    /// </summary>
    private void DeliverRun(int slot, ReadOnlySpan<byte> packets)
    {
        const int header = LengthPrefixFramer.Size;
        int valid = 0;
        int count = 0;
        bool bad = false;
        while (valid < packets.Length)
        {
            ReadOnlySpan<byte> rest = packets[valid..];
            uint body;
            if (rest.Length < header
                || (body = BinaryPrimitives.ReadUInt32BigEndian(rest)) < (uint)_minBody
                || body > (uint)_maxBody || body > (uint)(rest.Length - header))
            {
                bad = true;
                break;
            }

            valid += header + (int)body;
            count++;
        }

        if (count > 0)
        {
            Counters.PacketsReceived += count;
            ObserveReceived(slot, valid);
            _handler.OnPackets(this, ConnectionAt(slot), packets[..valid]);
        }

        if (bad && _slots[slot].State == ConnectionState.Connected)
        {
            ProtocolError(slot);
        }
    }

    /// <summary>Raw: cuts packets out of one read and hands each whole packet to the handler (or the read itself, for RawStreamFramer).</summary>
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
            return;
        }

        ref ConnectionSlot s = ref _slots[slot];
        if (s.State != ConnectionState.Connected)
        {
            return; // the handler ended it; its bytes were given back with it
        }

        _partialBytes += s.Partial.Length - s.PartialCounted;
        s.PartialCounted = s.Partial.Length;
        if (s.PartialCounted > _options.ReceiveBudgetPerConnection || _partialBytes > _options.ReceiveBudgetPerShard)
        {
            Counters.ReceiveBudgetExceeded++;
            CloseNative(s.RoutingId);
            EndConnection(slot, ConnectionEndReason.ReceiveBudgetExceeded);
        }
    }

    /// <summary>Counts a whole packet and hands it to the handler; false when the handler ended the connection.</summary>
    private bool DeliverPacket(int slot, ReadOnlySpan<byte> packet)
    {
        Counters.PacketsReceived++;
        ObserveReceived(slot, packet.Length);
        _handler.OnPacket(this, ConnectionAt(slot), packet);
        return _slots[slot].State == ConnectionState.Connected;
    }

    /// <summary>The reassembler's sink for one connection of this shard.</summary>
    private readonly struct PacketDelivery(EngineShard shard, int slot) : IPacketSink
    {
        public bool OnPacket(ReadOnlySpan<byte> packet) => shard.DeliverPacket(slot, packet);
    }
}
