// The connect side of a shard: at most its share of ConnectConcurrency attempts in flight, each
// with a deadline, failed attempts retried after a delay, until every slot is resolved. An attempt
// that failed with a permanent errno (ConnectErrnoPolicy) is not retried.
//
// Each attempt gets a fresh routing id (generation in the top byte, slot below) set through
// CONNECT_ROUTING_ID, so an event of an abandoned attempt can never be taken for the current one.
using System.Buffers.Binary;
using System.Diagnostics;
using NetZlink.Interop;

namespace NetZlink.Engine;

public sealed unsafe partial class EngineShard
{
    private readonly List<int> _waiting;
    private int _nextToConnect;
    private int _attemptsInFlight;
    private int _unresolved = -1;
    private bool _resolvedReported;

    private int AttemptLimit => Math.Max(1, (_options.ConnectConcurrency + _shardCount - 1) / _shardCount);

    private bool AdvanceConnects(long now)
    {
        if (_accepting)
        {
            return false;
        }

        if (_unresolved == -1)
        {
            _unresolved = _slots.Length;
            if (_unresolved == 0)
            {
                _resolvedReported = true;
                ((ClientEngine)_engine).OnShardConnectsResolved();
            }
        }

        if (_unresolved == 0 || Draining)
        {
            // A draining engine starts no attempt (nor reconnect round).
            return false;
        }

        bool busy = false;
        for (int i = _waiting.Count - 1; i >= 0; i--)
        {
            int slot = _waiting[i];
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State == ConnectionState.Connecting && now >= s.DeadlineTicks)
            {
                CloseNative(s.RoutingId);
                AttemptFailed(slot, timedOut: true, errno: EngineErrors.ETIMEDOUT);
                busy = true;
            }
            else if (s.State == ConnectionState.RetryWait && now >= s.DeadlineTicks && _attemptsInFlight < AttemptLimit)
            {
                StartAttempt(slot, now);
                busy = true;
            }

            if (s.State is not (ConnectionState.Connecting or ConnectionState.RetryWait))
            {
                s.InWaitList = false;
                _waiting[i] = _waiting[^1];
                _waiting.RemoveAt(_waiting.Count - 1);
            }
        }

        while (_attemptsInFlight < AttemptLimit && _nextToConnect < _slots.Length)
        {
            StartAttempt(_nextToConnect++, now);
            busy = true;
        }

        return busy;
    }

    private void StartAttempt(int slot, long now)
    {
        ref ConnectionSlot s = ref _slots[slot];
        Debug.Assert(s.State is ConnectionState.Idle or ConnectionState.RetryWait, "an attempt starts from Idle or RetryWait");
        s.Generation = s.Generation == byte.MaxValue ? (byte)1 : (byte)(s.Generation + 1);
        s.RoutingId = ((uint)s.Generation << 24) | (uint)slot;
        s.Attempts++;
        ObserveAttemptStarted(slot);

        byte* id = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(new Span<byte>(id, 4), s.RoutingId);
        int rc = Native.SetOption(_socket, ZlinkConstants.ZLINK_CONNECT_ROUTING_ID, id, 4);
        if (rc == 0)
        {
            byte[] endpoint = ((ClientEngine)_engine).EndpointUtf8((slot * _shardCount) + Index);
            fixed (byte* e = endpoint)
            {
                rc = Native.Connect(_socket, e);
            }
        }

        if (!s.InWaitList)
        {
            s.InWaitList = true;
            _waiting.Add(slot);
        }

        if (rc != 0)
        {
            s.Transition(ConnectionState.Connecting);
            _attemptsInFlight++;
            AttemptFailed(slot, timedOut: false, errno: Native.Errno());
            return;
        }

        s.Transition(ConnectionState.Connecting);
        s.DeadlineTicks = now + (long)(_options.ConnectTimeout.TotalSeconds * Stopwatch.Frequency);
        _attemptsInFlight++;
    }

    private void AttemptFailed(int slot, bool timedOut, int errno)
    {
        ref ConnectionSlot s = ref _slots[slot];
        Debug.Assert(s.State == ConnectionState.Connecting, "only an attempt in flight can fail");
        _attemptsInFlight--;
        // An attempt the native layer gave up on with ETIMEDOUT timed out as surely as one that hit
        // our own deadline: both are connect_timeout, not connect_fail.
        timedOut |= errno == EngineErrors.ETIMEDOUT;
        s.LastTimedOut = timedOut;
        s.LastErrno = errno;
        _engine.CountError(errno);
        // An error that would come back the same on the next try resolves the connection now
        // (ConnectErrnoPolicy lists both kinds).
        if (s.Attempts <= _options.ConnectRetries && (timedOut || !ConnectErrnoPolicy.IsPermanent(errno)))
        {
            s.Transition(ConnectionState.RetryWait);
            ObserveAttemptFailed(slot, timedOut, errno, final: false);
            s.DeadlineTicks = Stopwatch.GetTimestamp() + (long)(_options.ConnectRetryDelay.TotalSeconds * Stopwatch.Frequency);
            return;
        }

        if (s.ReconnectRound > 0)
        {
            // A reconnect round ran out: the policy says whether another one follows.
            ObserveAttemptFailed(slot, timedOut, errno, final: false);
            ReconnectRoundFailed(slot, WithTlsReason(slot, new ConnectFailure(timedOut, errno, s.Attempts)));
            return;
        }

        s.Transition(ConnectionState.Failed);
        if (timedOut)
        {
            Counters.ConnectTimedOut++;
        }
        else
        {
            Counters.ConnectFailed++;
        }

        ObserveAttemptFailed(slot, timedOut, errno, final: true);
        // The handler hears of it before ConnectsResolved can complete.
        ConnectFailure failure = WithTlsReason(slot, new ConnectFailure(timedOut, errno, s.Attempts));
        _handler.OnConnectFailed(this, ConnectionAt(slot), failure);
        ConnectResolved();
    }

    /// <summary>A failed TLS handshake's reason, read from the socket, added to <paramref name="failure"/>.</summary>
    private ConnectFailure WithTlsReason(int slot, ConnectFailure failure)
        => !failure.TimedOut && failure.Errno is ZlinkConstants.EACCES or ZlinkConstants.EPROTO && IsTlsEndpoint(slot)
            ? failure with { TlsError = ReadTlsLastError(), TlsVerifyResult = ReadIntOption(ZlinkConstants.ZLINK_TLS_LAST_VERIFY_RESULT, 0) }
            : failure;

    /// <summary>Whether the slot's connection goes to a tls:// or wss:// endpoint.</summary>
    private bool IsTlsEndpoint(int slot)
    {
        ReadOnlySpan<byte> endpoint = ((ClientEngine)_engine).EndpointUtf8((slot * _shardCount) + Index);
        return endpoint.StartsWith("tls://"u8) || endpoint.StartsWith("wss://"u8);
    }

    /// <summary>ZLINK_TLS_LAST_ERROR of the shard's socket: the reason of the TLS handshake that failed last (null when the library cannot say).</summary>
    private string? ReadTlsLastError()
    {
        byte* text = stackalloc byte[512];
        nuint size = 512;
        if (Native.GetOption(_socket, ZlinkConstants.ZLINK_TLS_LAST_ERROR, text, &size) != 0 || size <= 1)
        {
            return null;
        }

        return System.Text.Encoding.UTF8.GetString(text, (int)size - 1);
    }

    private void ConnectResolved()
    {
        // Reported once: a connection that reconnects is unresolved again for a while, but the
        // engine's ConnectsResolved is about the first round of every connection.
        if (--_unresolved == 0 && !_resolvedReported)
        {
            _resolvedReported = true;
            ((ClientEngine)_engine).OnShardConnectsResolved();
        }
    }

    /// <summary>Receiving resumed after a pause of <paramref name="ticks"/>: attempts in flight and retries wait that much longer.</summary>
    private void ShiftConnectDeadlines(long ticks)
    {
        foreach (int slot in _waiting)
        {
            _slots[slot].DeadlineTicks += ticks;
        }
    }

    /// <summary>Milliseconds until the next connect deadline or retry, capped so stop requests are seen.</summary>
    private int NextTimerDelayMs()
    {
        // Once every slot is resolved AdvanceConnects no longer prunes _waiting, so the slots left
        // in it are established or failed: their old deadlines must not make the sleep a spin.
        if (_accepting || _unresolved == 0 || (_waiting.Count == 0 && _nextToConnect >= _slots.Length))
        {
            return IdleSleepMs;
        }

        long now = Stopwatch.GetTimestamp();
        long next = long.MaxValue;
        foreach (int slot in _waiting)
        {
            ref ConnectionSlot s = ref _slots[slot];
            if (s.State is ConnectionState.Connecting or ConnectionState.RetryWait)
            {
                next = Math.Min(next, s.DeadlineTicks);
            }
        }

        long ms = next == long.MaxValue ? IdleSleepMs : (next - now) * 1000 / Stopwatch.Frequency;
        return (int)Math.Clamp(ms, 0, IdleSleepMs);
    }

    /// <summary>The errno the native library gave for a failed attempt, when its monitor told; else ECONNREFUSED-unknown 0.</summary>
    private int LastConnectErrno(uint routingId) => _connectMonitor?.ErrnoFor(routingId) ?? 0;
}
