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
    // With an infinite drain timeout, the most the socket's close waits for its connections' output.
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
            if (s.State == ConnectionState.Connected && now - s.LastReceiveTicks >= _idleTicks)
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
        CloseToPostsForDrain();
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

        bool flushed = _posted.IsEmpty && _pendingSends.Count == 0;
        if (!flushed && now < deadline)
        {
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
    /// On the way out, before the connections end: while draining, the posted
    /// frames counted as sent that the native socket could still hold (each connection's, at most
    /// SNDHWM of them). The native library cannot say what its queues hold, only the close can:
    /// see <see cref="CloseSocketAfterDrain"/>.
    /// </summary>
    private void NoteNativeMayHold()
    {
        if (!Draining)
        {
            return;
        }

        long cap = _options.HighWaterMark > 0 ? _options.HighWaterMark : long.MaxValue;
        long mayHold = 0;
        for (int slot = 0; slot < _slots.Length; slot++)
        {
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State == ConnectionState.Connected)
            {
                mayHold += Math.Min(s.PostsSentLive, cap);
            }
        }

        _nativeMayHold = mayHold;
    }

    /// <summary>
    /// Closes the socket of a draining shard and checks the native flush: the close waits until
    /// every connection's queued output is written or its LINGER (the drain's time left; 0 once
    /// the deadline passed) runs out. One that ran out may have left frames unwritten, which were
    /// counted as sent: the frames that could have been in the native queues (an upper bound)
    /// move to DroppedDrainDeadline and the drain is not in time (DrainAsync returns false).
    /// </summary>
    private void CloseSocketAfterDrain(SocketHandle owner)
    {
        long started = Stopwatch.GetTimestamp();
        owner.Dispose();
        if (!Draining)
        {
            return;
        }

        // In time: the close returned before its LINGER ran out, so the native queues were empty.
        // Otherwise (the deadline passed: LINGER 0 drops them; or the LINGER ran out) they may not be.
        bool inTime = Volatile.Read(ref _drainedInTime) && _drainLingerMs > 0
            && Stopwatch.GetElapsedTime(started).TotalMilliseconds + 1 < _drainLingerMs;
        if (!inTime)
        {
            long mayHold = _nativeMayHold;
            Volatile.Write(ref Counters.PostsDroppedDeadline, Counters.PostsDroppedDeadline + mayHold);
            Volatile.Write(ref Counters.PostsSent, Counters.PostsSent - mayHold);
            _drainDeadlinePassed = true;
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
