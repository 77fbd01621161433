// A shard's connection lifecycle beyond connect and receive: dead-peer detection (IdleTimeout),
// reconnect rounds of a client connection that was lost (EngineOptions.Reconnect) and the drain
// (StreamEngine.DrainAsync). No timer per connection: idle connections are found by a scan of the
// slots every quarter of the timeout, reconnect rounds wait in the connect wait list with their
// start as the slot's deadline, and the drain is checked once per pass.
using System.Diagnostics;
using NetZlink.Interop;

namespace NetZlink.Engine;

public sealed unsafe partial class EngineShard
{
    // A library without ZLINK_STREAM_EVENT (zlink 1.3) drains by a closing socket's LINGER: with an
    // infinite drain timeout, the most that close waits for its connections' output.
    private const int InfiniteDrainLingerMs = 30_000;

    private long _idleTicks;
    private long _idleScanTicks;
    private long _nextIdleScan;
    private Random? _reconnectRandom;

    // The drain: the deadline (Stopwatch ticks; long.MaxValue for none) is written by other
    // threads, so it is read with Volatile; the rest is the shard thread's.
    private long _drainDeadline = long.MinValue;
    private bool _drainBegun;
    private bool _drainDeadlinePassed;
    private bool _drainedInTime;
    private long _passTicks;

    // The LINGER the drain gave the socket's close (0: none), and the posted frames counted as
    // sent that the native queues could still hold then (bounded per connection by SNDHWM).
    private int _drainLingerMs;
    private long _nativeMayHold;

    // The drain's close phase: each connection was asked to close after its output (the native
    // socket flushes it, half-closes and waits for the peer's end, bounded by LINGER = the time
    // left), and the shard keeps running until each one's 0x00 came (_drainOpen is how many have
    // not; _drainCut how many ended with bytes that may not have arrived) or the deadline passed.
    private bool _drainClosePhase;
    private int _drainOpen;
    private int _drainCut;

    // An accepted frame was counted DroppedClosed during the drain (its connection ended other
    // than by the drain's clean close, see DrainConnectionLost): the drain is false.
    private bool _drainLost;

    /// <summary>True once this shard stopped after a drain that flushed everything it held before the deadline.</summary>
    internal bool DrainedInTime => Volatile.Read(ref _drainedInTime);

    private bool Draining => Volatile.Read(ref _drainDeadline) != long.MinValue;

    private void InitLifecycle()
    {
        if (_options.IdleTimeout > TimeSpan.Zero)
        {
            _idleTicks = (long)(_options.IdleTimeout.TotalSeconds * Stopwatch.Frequency);
            _idleScanTicks = Math.Clamp(_idleTicks / 4, Stopwatch.Frequency / 1000, Stopwatch.Frequency);
        }

        if (_options.Reconnect is { } policy)
        {
            _reconnectRandom = policy.Seed is int seed ? new Random(unchecked(seed + (Index * 7919))) : new Random();
        }
    }

    // ---- dead-peer detection ------------------------------------------------

    /// <summary>Closes the connections that received nothing for IdleTimeout (scanned every quarter of it); true when any.</summary>
    private bool CloseIdleConnections(long now)
    {
        if (_idleTicks == 0 || now < _nextIdleScan || _receivePaused)
        {
            return false;
        }

        _nextIdleScan = now + _idleScanTicks;
        bool any = false;
        for (int slot = 0; slot < _slots.Length; slot++)
        {
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State == ConnectionState.Connected && !s.DrainClosing && now - s.LastReceiveTicks >= _idleTicks)
            {
                Counters.IdleTimeouts++;
                ObserveIdleTimeout(slot, now - s.LastReceiveTicks);
                CloseNative(s.RoutingId);
                EndConnection(slot, ConnectionEndReason.IdleTimeout);
                any = true;
            }
        }

        return any;
    }

    /// <summary>Receiving resumed after a pause: the time the shard did not read does not count as the peers' silence.</summary>
    private void ShiftIdleClocks(long ticks)
    {
        if (_idleTicks == 0)
        {
            return;
        }

        for (int slot = 0; slot < _slots.Length; slot++)
        {
            _slots[slot].LastReceiveTicks += ticks;
        }
    }

    /// <summary>Milliseconds until the next idle scan or drain deadline, at most <paramref name="cap"/>.</summary>
    private int LifecycleDelayMs(int cap)
    {
        long next = long.MaxValue;
        if (_idleTicks != 0)
        {
            next = _nextIdleScan;
        }

        long deadline = Volatile.Read(ref _drainDeadline);
        if (deadline != long.MinValue)
        {
            next = Math.Min(next, deadline);
        }

        if (next == long.MaxValue)
        {
            return cap;
        }

        long ms = (next - Stopwatch.GetTimestamp()) * 1000 / Stopwatch.Frequency;
        return (int)Math.Clamp(ms + 1, 0, cap);
    }

    // ---- reconnecting ---------------------------------------------------------

    /// <summary>After a client connection ended: schedules its first reconnect round when the policy says so.</summary>
    private void MaybeReconnect(int slot, ConnectionEndReason reason)
    {
        if (_accepting || _options.Reconnect is null || reason is not (ConnectionEndReason.Remote or ConnectionEndReason.IdleTimeout)
            || _stopRequested || Draining)
        {
            return;
        }

        // The slot is unresolved again until the round connects or the policy gives up.
        _unresolved++;
        ScheduleRound(slot, last: null);
    }

    /// <summary>The next reconnect round of a slot, after the policy's delay; or the give-up, when its rounds ran out.</summary>
    private void ScheduleRound(int slot, ConnectFailure? last)
    {
        ReconnectPolicy policy = _options.Reconnect!;
        ref ConnectionSlot s = ref _slots[slot];
        int round = s.ReconnectRound + 1;
        if (last is { } failure && policy.MaxAttempts > 0 && round > policy.MaxAttempts)
        {
            GiveUp(slot, failure);
            return;
        }

        s.ReconnectRound = round;
        TimeSpan delay = policy.Delay(round, _reconnectRandom!.NextDouble());
        s.Transition(ConnectionState.RetryWait);
        s.Attempts = 0;
        s.DeadlineTicks = Stopwatch.GetTimestamp() + (long)(delay.TotalSeconds * Stopwatch.Frequency);
        if (!s.InWaitList)
        {
            s.InWaitList = true;
            _waiting.Add(slot);
        }

        Counters.Reconnects++;
        ObserveReconnecting(slot, round, delay);
        _handler.OnReconnecting(this, ConnectionAt(slot), round, delay);
    }

    /// <summary>A reconnect round failed (its attempts ran out, or an error no retry can change).</summary>
    private void ReconnectRoundFailed(int slot, ConnectFailure failure)
    {
        if (failure.Permanent || _stopRequested || Draining)
        {
            GiveUp(slot, failure);
            return;
        }

        ScheduleRound(slot, failure);
    }

    /// <summary>The policy gave up on a slot: the connection fails for good, with a reason, like one that never came up.</summary>
    private void GiveUp(int slot, ConnectFailure failure)
    {
        ref ConnectionSlot s = ref _slots[slot];
        s.Transition(ConnectionState.Failed);
        if (failure.TimedOut)
        {
            Counters.ConnectTimedOut++;
        }
        else
        {
            Counters.ConnectFailed++;
        }

        Counters.ReconnectsGaveUp++;
        failure = failure with { Reconnects = s.ReconnectRound };
        ObserveReconnectGaveUp(slot, failure);
        _handler.OnConnectFailed(this, ConnectionAt(slot), failure);
        ConnectResolved();
    }

    // ---- draining ----------------------------------------------------------

    /// <summary>Any thread: the shard refuses posts from now on, flushes what it holds and stops by <paramref name="deadline"/> (Stopwatch ticks).</summary>
    internal void BeginDrain(long deadline)
    {
        RefusePostsForDrain();
        _ = Interlocked.CompareExchange(ref _drainDeadline, deadline, long.MinValue);
        Wake();
    }

    /// <summary>Any thread: the drain's deadline is now (its cancellation token fired).</summary>
    internal void DrainDeadlineNow()
    {
        Volatile.Write(ref _drainDeadline, Stopwatch.GetTimestamp());
        Wake();
    }

    /// <summary>
    /// Shard thread, each pass while draining: a server stops accepting, and once nothing posted
    /// or held is left (or the deadline passed) the shard stops, giving its socket a LINGER of the
    /// time left so the output the socket took is flushed before its connections close.
    /// </summary>
    private void AdvanceDrain(long now)
    {
        long deadline = Volatile.Read(ref _drainDeadline);
        if (deadline == long.MinValue)
        {
            return;
        }

        if (!_drainBegun)
        {
            _drainBegun = true;
            if (_accepting)
            {
                StopListening();
            }
        }

        if (_drainClosePhase)
        {
            if (_drainOpen == 0 || now >= deadline)
            {
                FinishDrain(inTime: _drainOpen == 0 && _drainCut == 0 && !_drainLost);
            }

            return;
        }

        bool flushed = _posted.IsEmpty && _pendingSends.Count == 0;
        if (!flushed && now < deadline)
        {
            return;
        }

        if (flushed && now < deadline && _eventOption)
        {
            BeginDrainCloses(deadline, now);
            return;
        }

        int linger;
        if (flushed && now < deadline)
        {
            linger = deadline == long.MaxValue ? InfiniteDrainLingerMs : (int)Math.Min(int.MaxValue, (deadline - now) * 1000 / Stopwatch.Frequency);
            Volatile.Write(ref _drainedInTime, true);
        }
        else
        {
            linger = 0;
            _drainDeadlinePassed = !flushed;
            Volatile.Write(ref _drainedInTime, flushed);
        }

        _ = Native.SetOption(_socket, ZlinkConstants.ZLINK_LINGER, &linger, sizeof(int));
        _drainLingerMs = linger;
        _stopAsked = true;
        _stopRequested = true;
    }

    /// <summary>
    /// Everything posted went to the native socket: each connection is asked to close after its
    /// output, with LINGER the time left (int.MaxValue ms for an infinite drain: until its output
    /// is out and the peer ended, or the peer is gone). The shard's loop goes on meanwhile, never blocking on a
    /// close; each connection's 0x00 says how its close ended (<see cref="DrainCloseEnded"/>).
    /// </summary>
    private void BeginDrainCloses(long deadline, long now)
    {
        // An infinite drain: the longest LINGER (24.8 days), not -1, whose half-close would end once
        // the peer acknowledged everything instead of at its end (a peer still writing would then
        // get a reset, and may drop what it had not read yet).
        int linger = deadline == long.MaxValue ? int.MaxValue : (int)Math.Clamp((deadline - now) * 1000 / Stopwatch.Frequency, 1, int.MaxValue);
        _ = Native.SetOption(_socket, ZlinkConstants.ZLINK_LINGER, &linger, sizeof(int));
        _drainClosePhase = true;
        for (int slot = 0; slot < _slots.Length; slot++)
        {
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State == ConnectionState.Connected)
            {
                s.DrainClosing = true;
                _drainOpen++;
                CloseNative(s.RoutingId);
            }
        }

        if (_drainOpen == 0)
        {
            FinishDrain(inTime: !_drainLost);
        }
    }

    /// <summary>
    /// The 0x00 of a connection the drain closed: cause 0 means every byte went out and the peer
    /// ended its side after it (or its TCP acknowledged all), so its frames are exactly sent;
    /// any other cause (ETIMEDOUT: the LINGER ran out; ECONNRESET: the peer reset) leaves them
    /// uncertain. The connection hears its Disconnected (EngineStopped) when the shard stops.
    /// </summary>
    private void DrainCloseEnded(int slot, int cause)
    {
        ref ConnectionSlot s = ref _slots[slot];
        if (s.DrainFlushed || !s.DrainClosing)
        {
            return;
        }

        s.DrainFlushed = cause == 0;
        s.DrainClosing = false; // a cut one (not DrainFlushed): its frames move at the end
        _drainOpen--;
        if (cause != 0)
        {
            _drainCut++;
        }
    }

    /// <summary>
    /// Shard thread, as a connection ends other than by the drain's own close (the peer's end or
    /// reset, a local close, a protocol error...): while draining nothing proves what of its current
    /// life arrived (the native queue and the kernel's buffers are thrown away with it), so those
    /// frames move from Sent to DroppedClosed and the drain returns false. A connection still being
    /// drain-closed stops counting as open (it is cut).
    /// </summary>
    private void DrainConnectionLost(ref ConnectionSlot s)
    {
        if (!Draining)
        {
            return;
        }

        if (s.DrainClosing)
        {
            s.DrainClosing = false;
            _drainOpen--;
            _drainCut++;
        }

        long unproven = s.PostsSentLive;
        if (unproven == 0)
        {
            return;
        }

        s.PostsSentLive = 0;
        Volatile.Write(ref Counters.PostsDroppedClosed, Counters.PostsDroppedClosed + unproven);
        Volatile.Write(ref Counters.PostsSent, Counters.PostsSent - unproven);
        NoteDrainDroppedClosed();
    }

    /// <summary>Shard thread: an accepted frame was dropped for its connection's end; while draining, the drain cannot be true.</summary>
    private void NoteDrainDroppedClosed()
    {
        if (Draining)
        {
            _drainLost = true;
        }
    }

    /// <summary>The close phase is over (all closed, or the deadline): the socket closes at once (LINGER 0) and the shard stops.</summary>
    private void FinishDrain(bool inTime)
    {
        int zero = 0;
        _ = Native.SetOption(_socket, ZlinkConstants.ZLINK_LINGER, &zero, sizeof(int));
        _drainLingerMs = 0;
        _drainDeadlinePassed = !inTime;
        Volatile.Write(ref _drainedInTime, inTime);
        _stopAsked = true;
        _stopRequested = true;
    }

    /// <summary>
    /// On the way out: a shard that drains and is stopped at or after its deadline (DrainAsync
    /// gives up waiting at the same moment) drops what it holds for the deadline, not for a stop.
    /// </summary>
    private void NoteDrainDeadline()
    {
        long deadline = Volatile.Read(ref _drainDeadline);
        if (deadline != long.MinValue && !_drainedInTime && Stopwatch.GetTimestamp() >= deadline)
        {
            _drainDeadlinePassed = true;
        }
    }

    /// <summary>
    /// On the way out, before the connections end: while draining, the posted frames counted as
    /// sent whose arrival is not known: each open connection's frames of its current life, except
    /// a connection whose drain close ended with everything out (DrainFlushed). What the native
    /// queues and the kernel's socket buffers of the others still held cannot be counted frame by
    /// frame, so all of that life's frames are the bound. See <see cref="CloseSocketAfterDrain"/>.
    /// </summary>
    private void NoteNativeMayHold()
    {
        if (!Draining)
        {
            return;
        }

        long mayHold = 0;
        for (int slot = 0; slot < _slots.Length; slot++)
        {
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State == ConnectionState.Connected && !s.DrainFlushed)
            {
                mayHold += s.PostsSentLive;
            }
        }

        _nativeMayHold = mayHold;
    }

    /// <summary>
    /// Closes the socket of a draining shard and settles the counts. After a close phase the
    /// socket has LINGER 0 and closes at once: connections whose drain close did not end with
    /// everything out move their frames from Sent to DroppedDrainDeadline. Without one (a library
    /// without ZLINK_STREAM_EVENT, or the deadline came before the flush) the close itself waits
    /// for the output up to its LINGER (0 once the deadline passed); one that ran out may have
    /// left frames unwritten, and the frames of the open connections move likewise. Either way the
    /// drain is then not in time (DrainAsync returns false).
    /// </summary>
    private void CloseSocketAfterDrain(SocketHandle owner)
    {
        long started = Stopwatch.GetTimestamp();
        owner.Dispose();
        if (!Draining)
        {
            return;
        }

        // In time: after a close phase, every connection's close ended with all out; without one,
        // the close returned before its LINGER ran out, so the native queues were empty.
        bool inTime = Volatile.Read(ref _drainedInTime) && (_drainClosePhase ? _nativeMayHold == 0
            : _drainLingerMs > 0 && Stopwatch.GetElapsedTime(started).TotalMilliseconds + 1 < _drainLingerMs);
        if (!inTime)
        {
            long mayHold = _nativeMayHold;
            Volatile.Write(ref Counters.PostsDroppedDeadline, Counters.PostsDroppedDeadline + mayHold);
            Volatile.Write(ref Counters.PostsSent, Counters.PostsSent - mayHold);
            _drainDeadlinePassed = true;
            Volatile.Write(ref _drainedInTime, false);
        }

        if (_drainLost)
        {
            // Frames of a connection that ended meanwhile moved to DroppedClosed (DrainConnectionLost).
            Volatile.Write(ref _drainedInTime, false);
        }
    }

    /// <summary>A draining server takes no new connections: its endpoint is unbound (new peers are refused by the system).</summary>
    private void StopListening()
    {
        string? bound = ((ServerEngine)_engine).BoundEndpoints[Index];
        if (bound is null)
        {
            return;
        }

        byte[] utf8 = System.Text.Encoding.UTF8.GetBytes(bound + "\0");
        fixed (byte* e = utf8)
        {
            // A failure leaves the listener open; Accept refuses what comes through it while draining.
            _ = Native.Unbind(_socket, e);
        }
    }
}
