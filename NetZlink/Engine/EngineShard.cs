// One worker of the ClientEngine: a named thread that owns one STREAM socket and every
// connection assigned to it, and drives them as non-blocking state machines.
//
// The loop, each pass: take frames posted by other threads; start, time out and retry connect
// attempts; receive up to MaxMessagesPerPass messages (each [id][payload]: connection events, or
// packets: whole ones from the native framing for the default framer, stream bytes cut by the
// framer for the others; see NativeFraming); let the handler send; retry frames the socket
// refused. Every native call is one DONTWAIT try; what would block is resumed on a later pass.
// A pass with nothing to do sleeps in zlink_poll on the socket and an eventfd that other threads
// write to wake it, so an idle engine uses no CPU; a handler that paces its own sends (WakeBy)
// ends that sleep at its next due time, to the microsecond, with a timerfd in the same poll
// (zlink_poll's own timeout counts whole milliseconds).
//
// Ending: the loop stops when the engine asks (RequestStop) or when a native call answers ETERM
// (the context was shut down or disposed under the engine). Either way the shard itself ends its
// live connections (OnDisconnected with EngineStopped or ContextTerminated), closes its socket
// and its monitor, and reports to the engine, so that nothing of the context is left open by a
// shard that has exited.
using System.Collections.Concurrent;
using System.Diagnostics;
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>
/// A shard of a <see cref="ClientEngine"/>: handed to <see cref="IConnectionHandler"/> callbacks,
/// which may call <see cref="Send"/>, <see cref="Close"/> and use <see cref="SendScratch"/> on the
/// shard's own thread only.
/// </summary>
public sealed unsafe partial class EngineShard
{
    private const int MaxMessagesPerPass = 512;
    private const int IdleSleepMs = 250;

    private readonly StreamEngine _engine;
    private readonly bool _accepting;
    private readonly bool _raw;
    private readonly bool _lengthPrefixed;
    private readonly int _minBody;
    private readonly int _maxBody;
    private readonly EngineOptions _options;
    private readonly int _shardCount;
    private readonly ConnectionSlot[] _slots;
    private readonly byte[] _receiveBuffer;
    private readonly byte[] _sendScratch;
    private readonly System.Buffers.ArrayPool<byte> _pool;
    private readonly PacketReassembler? _reassembler;
    private readonly Lock _wakeFdGate = new();
    private int _wakeFd;
    private IConnectionHandler _handler = null!;

    // The handler overrides IConnectionHandler.OnPackets: Batch payloads go to it a run at a time.
    private bool _handlerTakesRuns;

    // The shard thread's managed id (0 until it runs): Send and Close refuse every other thread,
    // whose calls would race the shard's own use of the native socket and its buffers.
    private int _threadId;

    /// <summary>Throws unless the caller is this shard's own thread (a handler callback).</summary>
    private void RequireShardThread(string operation)
    {
        if (Environment.CurrentManagedThreadId != _threadId)
        {
            ThrowNotShardThread(operation);
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private void ThrowNotShardThread(string operation) => throw new InvalidOperationException(
        $"EngineShard.{operation} was called from thread {Environment.CurrentManagedThreadId}, not from shard {Index}'s own thread: " +
        "call it from a handler callback, or from other threads use StreamEngine.TrySend/SendAsync (or a ConnectionPipe).");
    private ConnectErrnoMonitor? _connectMonitor;
    // The raw pointer stays beside its owner on purpose: the shard thread is the socket's only
    // user from Start until it disposes _socketOwner on its way out, so no lease is needed, and the
    // send/receive loops pass it to Native's nint wrappers without a SafeHandle load per call.
    private nint _socket;
    private SocketHandle? _socketOwner;
    private Thread? _thread;
    private int _sleeping;
    private int _passRequested;
    private long _wakeByTicks = long.MaxValue;
    private int _timerFd = -1;
    private volatile bool _stopRequested;

    // Set by UseFraming when the engine makes the socket, before the thread starts.
    private NativeFraming _framing;
    private bool _eventOption;

    // Set only by RequestStop: a stop without it came from ETERM, i.e. the context was terminated.
    private volatile bool _stopAsked;
    internal ShardCounters Counters;

    // Bytes of incomplete packets the reassembler holds for this shard's connections (custom framers).
    private long _partialBytes;

    internal EngineShard(StreamEngine engine, EngineOptions options, int index, int shardCount, int slotCount, bool accepting)
    {
        _engine = engine;
        _accepting = accepting;
        _raw = options.Framer is RawStreamFramer;
        if (options.Framer is LengthPrefixFramer lengthPrefix)
        {
            _lengthPrefixed = true;
            _minBody = lengthPrefix.MinBody;
            _maxBody = LargestBody(options);
        }

        _options = options;
        Index = index;
        _shardCount = shardCount;
        _slots = new ConnectionSlot[slotCount];
        _receiveBuffer = GC.AllocateArray<byte>(options.ReceiveChunkSize, pinned: true);
        _sendScratch = GC.AllocateArray<byte>(options.SendScratchSize, pinned: true);
        _pool = System.Buffers.ArrayPool<byte>.Create(Math.Max(options.MaxPacketSize, options.MaxPendingBytesPerConnection), slotCount + 16);
        // Only a custom framer needs the managed reassembly: the default one rides the native
        // framing (whole packets) and RawStreamFramer hands bytes on as they come.
        _reassembler = _raw || _lengthPrefixed ? null : new PacketReassembler(options.Framer, options.MaxPacketSize, _pool);
        if (accepting)
        {
            _slotById = new Dictionary<uint, int>();
            _freeSlots = new Stack<int>(Enumerable.Range(0, slotCount).Reverse());
        }
        else
        {
            for (int slot = 0; slot < slotCount; slot++)
            {
                _slots[slot].Serial = (slot * shardCount) + index;
            }
        }

        _waiting = new List<int>(Math.Min(slotCount, options.ConnectConcurrency) + 16);
        _pendingSends = new List<int>(64);
        _postedBytesBySlot = new int[slotCount];
        InitLifecycle();
        _wakeFd = Native.WakeEventCreate();
        if (_wakeFd < 0)
        {
            throw new InvalidOperationException(
                $"eventfd() for shard {index} failed: errno {System.Runtime.InteropServices.Marshal.GetLastSystemError()} (out of descriptors?)");
        }
    }

    /// <summary>This shard's index (0-based).</summary>
    public int Index { get; }

    /// <summary>Connections this shard owns (slots 0..SlotCount-1).</summary>
    public int SlotCount => _slots.Length;

    /// <summary>A per-shard buffer in which a handler may build outgoing frames; valid on the shard thread only.</summary>
    public Span<byte> SendScratch => _sendScratch;

    /// <summary>
    /// The connection in one of this shard's slots. A client engine's connection <c>i</c> is always
    /// in the same slot; a server engine reuses a slot for later connections, each with a new
    /// <see cref="Connection.Index"/>.
    /// </summary>
    public Connection ConnectionAt(int slot) => new(_slots[slot].Serial, Index, slot);

    /// <summary>True while the connection in <paramref name="slot"/> is established.</summary>
    public bool IsConnected(int slot) => _slots[slot].State == ConnectionState.Connected;

    internal bool IsRunning => _thread is { IsAlive: true };

    /// <summary>
    /// The largest body the default framer accepts under <paramref name="options"/>: its own maximum
    /// within <see cref="EngineOptions.MaxPacketSize"/> and <see cref="EngineOptions.ReceiveBudgetPerConnection"/>. The shard's socket gets it as MAXMSGSIZE, so
    /// the native library drops a connection that announces more before buffering any of it.
    /// </summary>
    internal static int LargestBody(EngineOptions options)
        => options.Framer is LengthPrefixFramer framer
            ? Math.Max(0, Math.Min(framer.MaxBody, Math.Min(options.MaxPacketSize, options.ReceiveBudgetPerConnection) - LengthPrefixFramer.Size))
            : 0;

    /// <summary>Called by the engine once it has set the socket's framing, before <see cref="Start"/>.</summary>
    /// <param name="framing">What the socket does.</param>
    /// <param name="eventOption">Whether the library answers ZLINK_STREAM_EVENT and ZLINK_STREAM_EVENT_ERRNO.</param>
    internal void UseFraming(NativeFraming framing, bool eventOption)
    {
        Debug.Assert(framing == NativeFraming.Raw ? !_lengthPrefixed : _lengthPrefixed, "the default framer rides Batch or Length, the others Raw");
        _framing = framing;
        _eventOption = eventOption;
    }

    /// <summary>
    /// Asks for a pass of the loop no later than <paramref name="timestamp"/> (a
    /// <see cref="Stopwatch.GetTimestamp"/> value): if the shard goes idle first, its sleep ends by
    /// then instead of waiting for socket activity. It holds
    /// for the next sleep only, so a handler that sends on a clock asks again from each
    /// <see cref="IConnectionHandler.OnPass"/>; the earliest request wins. Call on the shard's
    /// thread only (from a handler callback).
    /// </summary>
    public void WakeBy(long timestamp)
    {
        if (timestamp < _wakeByTicks)
        {
            _wakeByTicks = timestamp;
        }
    }

    /// <summary>Whether <paramref name="handler"/>'s class implements OnPackets itself (not the interface's default).</summary>
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2075", Justification = "The handler's own type is kept by its use.")]
    private static bool OverridesOnPackets(IConnectionHandler handler)
    {
        System.Reflection.InterfaceMapping map = handler.GetType().GetInterfaceMap(typeof(IConnectionHandler));
        for (int i = 0; i < map.InterfaceMethods.Length; i++)
        {
            if (map.InterfaceMethods[i].Name == nameof(IConnectionHandler.OnPackets))
            {
                return map.TargetMethods[i].DeclaringType != typeof(IConnectionHandler);
            }
        }

        return false;
    }

    /// <summary>Takes over <paramref name="socket"/> and <paramref name="connectMonitor"/>: the shard closes both when it exits.</summary>
    internal void Start(IConnectionHandler handler, SocketHandle socket, ConnectErrnoMonitor? connectMonitor)
    {
        _handler = handler;
        _handlerTakesRuns = OverridesOnPackets(handler);
        // The shard thread is the socket's only user until it disposes the owner on its way out.
        _socketOwner = socket;
        _socket = socket.DangerousGetHandle();
        _connectMonitor = connectMonitor;
        _thread = new Thread(Run)
        {
            IsBackground = true,
            Name = $"{_options.ThreadNamePrefix}-{Index}",
        };
        _thread.Start();
    }

    internal void RequestStop()
    {
        _stopAsked = true;
        _stopRequested = true;
        Wake();
    }

    internal bool Join(TimeSpan timeout) => _thread is null || _thread.Join(timeout);

    /// <summary>Closes the eventfd of a shard whose thread never started (a running shard closes its own on exit).</summary>
    internal void ReleaseUnstarted()
    {
        if (_thread is null)
        {
            CloseToPosts();
            DropPosted();
            ReleaseNative();
        }
    }

    /// <summary>Makes the shard run a pass soon (see <see cref="StreamEngine.RequestPass"/>); any thread.</summary>
    internal void RequestPass()
    {
        // Interlocked (a full fence) before Wake reads _sleeping, like the queue's enqueue for Post.
        Interlocked.Exchange(ref _passRequested, 1);
        Wake();
    }

    private void Wake()
    {
        // Pairs with the Exchange in Sleep: either the shard sees the queued item before it
        // sleeps, or we see it sleeping and write the eventfd. Skipping the write while the
        // shard is busy keeps posting to one syscall per sleep at most.
        if (Volatile.Read(ref _sleeping) == 1)
        {
            // The lock (taken only when the shard sleeps, next to a syscall) keeps the shard from
            // closing the eventfd between our check and the write: a shard stopped by its context
            // may exit while other threads still post, and its descriptor number may be reused.
            lock (_wakeFdGate)
            {
                if (_wakeFd >= 0)
                {
                    Native.CounterAdd(_wakeFd, 1);
                }
            }
        }
    }

    private void Run()
    {
        _threadId = Environment.CurrentManagedThreadId;
        Exception? fault = null;
        try
        {
            while (!_stopRequested)
            {
                long sentBefore = Counters.FramesSent + Counters.FramesQueued;
                Volatile.Write(ref _passRequested, 0);
                bool busy = DrainPosted();
                long now = Stopwatch.GetTimestamp();
                _passTicks = now;
                if (ReceivingAllowed())
                {
                    busy |= AdvanceConnects(now);
                    busy |= ReceiveBatch();
                    busy |= CloseIdleConnections(now);
                }

                _handler.OnPass(this);
                busy |= RetryPendingSends();
                busy |= Counters.FramesSent + Counters.FramesQueued != sentBefore;
                AdvanceDrain(Stopwatch.GetTimestamp());
                if (!busy && !_stopRequested)
                {
                    Sleep();
                }
            }
        }
#pragma warning disable CA1031 // a shard must report any failure to the engine instead of dying silently
        catch (Exception ex)
#pragma warning restore CA1031
        {
            fault = ex;
        }
        finally
        {
            Exit(fault);
        }
    }

    /// <summary>
    /// The shard's way out, whatever stopped it: a handler exception or native failure stops the
    /// whole engine first (<see cref="StreamEngine.Fault"/>), then posting closes, every
    /// established connection hears OnDisconnected once (EngineFault, ContextTerminated or
    /// EngineStopped), every frame still held is counted as dropped, and the socket is closed.
    /// </summary>
    private void Exit(Exception? fault)
    {
        bool contextTerminated = fault is ContextTerminatedException || (fault is null && _stopRequested && !_stopAsked);
        if (fault is not null && !contextTerminated)
        {
            _engine.ReportFault(this, fault);
        }

        CloseToPosts();
        NoteDrainDeadline();
        NoteNativeMayHold();
        ConnectionEndReason reason = _engine.FaultStopped ? ConnectionEndReason.EngineFault
            : contextTerminated ? ConnectionEndReason.ContextTerminated
            : ConnectionEndReason.EngineStopped;
        Exception? thrown = EndConnections(reason);
        DropPosted();
        if (thrown is not null && fault is null)
        {
            fault = thrown;
            _engine.ReportFault(this, thrown);
        }

        ReleaseNative();
        _engine.OnShardExited(this, fault, contextTerminated);
    }

    private void Sleep()
    {
        int timeoutMs = _pendingSends.Count > 0 ? 1 : _receivePaused ? PausedSleepMs : LifecycleDelayMs(NextTimerDelayMs());
        bool timed = false;
        if (_wakeByTicks != long.MaxValue)
        {
            long now = Stopwatch.GetTimestamp();
            long ticks = _wakeByTicks <= now ? 0 : Math.Min(_wakeByTicks - now, Stopwatch.Frequency);
            // Rounded up, as the fallback when the timer cannot be armed: waking early would only
            // cost a pass that finds nothing due.
            long ms = ((ticks * 1000) + Stopwatch.Frequency - 1) / Stopwatch.Frequency;
            if (ms > 0 && ms <= timeoutMs)
            {
                timed = ArmTimer(_wakeByTicks);
            }

            timeoutMs = (int)Math.Min(timeoutMs, ms);
            _wakeByTicks = long.MaxValue;
        }

        Interlocked.Exchange(ref _sleeping, 1);
        if (!_posted.IsEmpty || _stopRequested || Volatile.Read(ref _passRequested) != 0)
        {
            Volatile.Write(ref _sleeping, 0);
            return;
        }

        ZlinkPollItem* items = stackalloc ZlinkPollItem[3];
        items[0] = new ZlinkPollItem { Socket = _socket, Events = SocketPollEvents };
        items[1] = new ZlinkPollItem { Socket = 0, Fd = _wakeFd, Events = ZlinkConstants.POLLIN };
        items[2] = new ZlinkPollItem { Socket = 0, Fd = _timerFd, Events = ZlinkConstants.POLLIN };
        int rc = Native.Poll(items, timed ? 3 : 2, timeoutMs);
        Volatile.Write(ref _sleeping, 0);
        if (rc < 0)
        {
            int errno = Native.Errno();
            if (errno == ZlinkConstants.ETERM)
            {
                _stopRequested = true;
                return;
            }

            EngineErrors.Throw($"zlink_poll on shard {Index}", errno);
        }

        if ((items[1].Revents & ZlinkConstants.POLLIN) != 0)
        {
            _ = Native.CounterRead(_wakeFd);
        }

        if (timed && (items[2].Revents & ZlinkConstants.POLLIN) != 0)
        {
            _ = Native.CounterRead(_timerFd);
        }
    }

    /// <summary>Sets the shard's one-shot timerfd to <paramref name="timestamp"/>; false when there is none to set (the poll's millisecond timeout then stands in).</summary>
    private bool ArmTimer(long timestamp)
    {
        if (_timerFd < 0)
        {
            // Made on first use: an engine whose handler never paces needs no descriptor for it.
            _timerFd = Native.MonotonicTimerCreate();
            if (_timerFd < 0)
            {
                return false;
            }
        }

        // Stopwatch counts CLOCK_MONOTONIC on Linux; setting the timer also clears an expiry nobody read.
        long nanoseconds = Stopwatch.Frequency == 1_000_000_000 ? timestamp : (long)(timestamp * (1e9 / Stopwatch.Frequency));
        return Native.TimerArmAt(_timerFd, nanoseconds);
    }

    /// <summary>Ends every live connection with <paramref name="reason"/>; returns what a handler threw, if anything.</summary>
    private Exception? EndConnections(ConnectionEndReason reason)
    {
        Exception? thrown = null;
        for (int slot = 0; slot < _slots.Length; slot++)
        {
            ref ConnectionSlot s = ref _slots[slot];
            int lost = s.Partial.Length;
            ReturnBuffers(ref s, slot, stopping: true);
            ObserveAttemptAbandoned(ref s);
            if (s.State != ConnectionState.Connected)
            {
                continue;
            }

            s.Transition(ConnectionState.Closed);
            // Counted like every other end, so Connected - Disconnects (the live connections, the
            // netzlink.engine.connections metric) is 0 once the engine has stopped.
            Counters.Disconnects++;
            ObserveDisconnected(slot, reason);
            Counters.LostPartialBytes += lost;
            try
            {
                _handler?.OnDisconnected(this, ConnectionAt(slot), reason, lost);
            }
#pragma warning disable CA1031 // the other connections must still hear of it, and nothing may escape the shard thread
            catch (Exception ex)
#pragma warning restore CA1031
            {
                thrown ??= ex;
            }
        }

        return thrown;
    }

    private void ReleaseNative()
    {
        // The monitor first: it is registered with the context like the socket, and a context
        // being disposed waits for both (this thread is the only one that reads the monitor).
        _connectMonitor?.Dispose();
        _connectMonitor = null;
        if (_socketOwner is not null)
        {
            _socket = 0;
            CloseSocketAfterDrain(_socketOwner);
            _socketOwner = null;
        }

        lock (_wakeFdGate)
        {
            if (_wakeFd >= 0)
            {
                _ = Native.CloseDescriptor(_wakeFd);
                _wakeFd = -1;
            }
        }

        if (_timerFd >= 0)
        {
            _ = Native.CloseDescriptor(_timerFd);
            _timerFd = -1;
        }
    }

    private void ReturnBuffers(ref ConnectionSlot s, int slot, bool stopping)
    {
        SettlePendingPosts(ref s, slot, sent: false, stopping);
        _partialBytes -= s.PartialCounted;
        s.PartialCounted = 0;
        _reassembler?.Release(ref s.Partial);
        if (s.Pending is not null)
        {
            _pool.Return(s.Pending);
            s.Pending = null;
        }

        s.PendingLength = 0;
    }
}
