// The connect side of a dotnet client shard: at most its share of --connect-concurrency attempts
// in flight, each with a deadline (--connect-timeout), failed or timed-out attempts retried
// --connect-retries times --connect-retry-delay-ms apart, every failed attempt counted by errno.
// The shard thread starts attempts and fires deadlines; the connect completion (a runtime thread)
// settles each attempt. A deadline closes the attempt's socket and the completion that follows
// (aborted) counts it as a timeout (ETIMEDOUT, 110).
using System.Diagnostics;
using System.Net.Sockets;
using NetZlink.Stress.Scenarios;

namespace NetZlink.Stress.DotnetStack;

internal sealed partial class DotnetClientShard
{
    private readonly int _attemptLimit;
    private readonly List<int> _waiting;
    private int _nextToConnect;
    private int _attemptsInFlight;
    private int _unresolved;
    private bool _reportedResolved;

    /// <summary>Called by the runtime when a connect attempt ends (or inline when it ended at once).</summary>
    public void OnConnectCompleted(ClientSocketEventArgs args)
    {
        try
        {
            SettleAttempt(args.Slot, args.SocketError);
        }
#pragma warning disable CA1031 // a callback on a runtime thread must not throw: the runner hears of it instead
        catch (Exception e)
#pragma warning restore CA1031
        {
            _client.ReportFault(e);
        }
    }

    /// <summary>Starts, times out and retries attempts; returns how long the shard thread may sleep (ms).</summary>
    private int AdvanceConnects(long now)
    {
        if (!_reportedResolved && Volatile.Read(ref _unresolved) == 0)
        {
            _reportedResolved = true;
            _client.OnShardResolved();
        }

        if (_waiting.Count == 0 && _nextToConnect >= _connections.Length)
        {
            return IdleWaitMs;
        }

        long next = long.MaxValue;
        for (int i = _waiting.Count - 1; i >= 0; i--)
        {
            int slot = _waiting[i];
            ref DotnetConnection c = ref _connections[slot];
            var state = (DotnetConnectionState)Volatile.Read(ref c.State);
            if (state == DotnetConnectionState.Connecting && now >= c.DeadlineTicks)
            {
                if (Transition(ref c, DotnetConnectionState.Connecting, DotnetConnectionState.TimingOut))
                {
                    // The completion (aborted) follows and settles the attempt as timed out.
                    c.Socket?.Dispose();
                }
            }
            else if (state == DotnetConnectionState.RetryWait && now >= Volatile.Read(ref c.DeadlineTicks)
                && Volatile.Read(ref _attemptsInFlight) < _attemptLimit)
            {
                StartAttempt(slot, now);
            }

            state = (DotnetConnectionState)Volatile.Read(ref c.State);
            if (state is DotnetConnectionState.Connected or DotnetConnectionState.Failed or DotnetConnectionState.Closed)
            {
                c.InWaitList = false;
                _waiting[i] = _waiting[^1];
                _waiting.RemoveAt(_waiting.Count - 1);
            }
            else if (state is DotnetConnectionState.Connecting or DotnetConnectionState.RetryWait)
            {
                next = Math.Min(next, Volatile.Read(ref c.DeadlineTicks));
            }
        }

        while (Volatile.Read(ref _attemptsInFlight) < _attemptLimit && _nextToConnect < _connections.Length)
        {
            StartAttempt(_nextToConnect++, now);
        }

        long ms = next == long.MaxValue ? IdleWaitMs : (next - now) * 1000 / Stopwatch.Frequency;
        return (int)Math.Clamp(ms, 1, IdleWaitMs);
    }

    private void StartAttempt(int slot, long now)
    {
        ref DotnetConnection c = ref _connections[slot];
        Debug.Assert(c.State is (int)DotnetConnectionState.Idle or (int)DotnetConnectionState.RetryWait, "an attempt starts from Idle or RetryWait");
        c.Attempts++;
        if (!c.InWaitList)
        {
            c.InWaitList = true;
            _waiting.Add(slot);
        }

        Socket socket;
        try
        {
            socket = new Socket(_endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            ConfigureClientSocket(socket, _settings);
        }
        catch (SocketException e)
        {
            // No socket at all (EMFILE, ENOBUFS): the attempt fails here, without a completion.
            bool began = Transition(ref c, (DotnetConnectionState)c.State, DotnetConnectionState.Connecting);
            Debug.Assert(began, "only the shard thread moves a connection out of Idle or RetryWait");
            Interlocked.Increment(ref _attemptsInFlight);
            SettleAttempt(slot, e.SocketErrorCode);
            return;
        }

        Volatile.Write(ref c.Socket, socket);
        c.DeadlineTicks = now + (long)(_settings.ConnectTimeoutSeconds * Stopwatch.Frequency);
        DotnetConnectionState from = (DotnetConnectionState)c.State;
        bool started = Transition(ref c, from, DotnetConnectionState.Connecting);
        Debug.Assert(started, "only the shard thread moves a connection out of Idle or RetryWait");
        Interlocked.Increment(ref _attemptsInFlight);

        ClientSocketEventArgs args = _receiveArgs[slot];
        args.RemoteEndPoint = _endpoint;
        bool pending;
        try
        {
            pending = socket.ConnectAsync(args);
        }
        catch (SocketException e)
        {
            SettleAttempt(slot, e.SocketErrorCode);
            return;
        }

        if (!pending)
        {
            SettleAttempt(slot, args.SocketError);
        }
    }

    /// <summary>No delay, a reset on close, and --sndbuf/--rcvbuf: every client socket of the dotnet stack.</summary>
    internal static void ConfigureClientSocket(Socket socket, ScenarioSettings settings)
    {
        socket.NoDelay = true;
        // Closing ends with a reset, not TIME_WAIT: back-to-back 10,000-connection runs would
        // otherwise run out of ephemeral ports towards the one server port.
        socket.LingerState = new LingerOption(enable: true, seconds: 0);
        if (settings.SendBuffer > 0)
        {
            socket.SendBufferSize = settings.SendBuffer;
        }

        if (settings.ReceiveBuffer > 0)
        {
            socket.ReceiveBufferSize = settings.ReceiveBuffer;
        }
    }

    /// <summary>Settles an attempt that ended with <paramref name="error"/> (any thread).</summary>
    private void SettleAttempt(int slot, SocketError error)
    {
        ref DotnetConnection c = ref _connections[slot];
        Interlocked.Decrement(ref _attemptsInFlight);
        if (error == SocketError.Success && Transition(ref c, DotnetConnectionState.Connecting, DotnetConnectionState.Connected))
        {
            Interlocked.Increment(ref _tallies.Connected);
            _plan.ColdStart.Connected();
            Resolved();
            Socket socket = c.Socket!;
            socket.Blocking = false;
            StartReceiving(slot);
            if (LoadPlan.IsSending(_plan.Phase))
            {
                ClientThreadState state = ClientThreadState.For(_client);
                using (state.Enter(_plan.Phase))
                {
                    Kick(slot, state);
                }
            }

            Wake();
            return;
        }

        // Failed, or the shard's deadline fired first (TimingOut): whichever state it is in now.
        c.Socket?.Dispose();
        bool retry = c.Attempts <= _settings.ConnectRetries;
        DotnetConnectionState to = retry ? DotnetConnectionState.RetryWait : DotnetConnectionState.Failed;
        if (retry)
        {
            Volatile.Write(ref c.DeadlineTicks, Stopwatch.GetTimestamp() + (long)(_settings.ConnectRetryDelayMs * Stopwatch.Frequency / 1000.0));
        }

        bool timedOut;
        if (Transition(ref c, DotnetConnectionState.Connecting, to))
        {
            timedOut = error == SocketError.TimedOut;
        }
        else
        {
            bool moved = Transition(ref c, DotnetConnectionState.TimingOut, to);
            Debug.Assert(moved, "an attempt being settled is Connecting or TimingOut");
            timedOut = true;
        }

        c.LastErrno = timedOut ? SocketErrno.TimedOut : SocketErrno.Of(error);
        _client.CountError(c.LastErrno);
        if (!retry)
        {
            _tallies.CountConnectFailure(timedOut);
            Resolved();
        }

        Wake();
    }

    private void Resolved()
    {
        if (Interlocked.Decrement(ref _unresolved) == 0)
        {
            Wake();
        }
    }
}
