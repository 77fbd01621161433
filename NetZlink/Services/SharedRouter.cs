using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading.Channels;
using NetZlink.Interop;

namespace NetZlink.Services;

/// <summary>
/// The ROUTER socket of a gateway or receiver, shared by its worker thread (which waits on the
/// socket's descriptor and receives) and by any thread that sends: every use is under
/// <see cref="Gate"/>.
/// </summary>
/// <remarks>
/// The descriptor is edge-like: any call on the socket (a send too) may take the wake-up it would
/// have given the worker. A send does not look at the socket's events (a system call) each time:
/// it marks the socket unchecked, and the look is made only when someone needs it: a send looks
/// itself while a reader waits (<see cref="_watchers"/>), and a reader that finds the queue empty
/// after unchecked sends looks (and receives) before it waits or gives up. The worker's own drains
/// clear the mark. A reader registers as waiting before it looks and a send marks before it reads
/// the count of waiting readers (both with a full fence), so one of the two always sees the other.
/// The per-message paths are compiled fully optimized from their first call
/// (AggressiveOptimization): a short burst would otherwise run in the JIT's first tier for most of
/// its length.
/// </remarks>
internal sealed class SharedRouter : IDisposable
{
    private readonly ZlinkMessage _frame = new();
    private readonly Channel<ServiceMessage> _incoming =
        Channel.CreateUnbounded<ServiceMessage>(new UnboundedChannelOptions { SingleWriter = false, SingleReader = false });
    private readonly Func<ReadOnlySpan<byte>, string> _serviceOf;
    private readonly WatchedReader _reader;
    private readonly BlockingReads _blocking = new();
    private readonly BlockingReads.TryTakeFunc<ServiceMessage> _tryReadOrCheck;

    // The direct reader (TryReceive): its managed thread id, 0 when none, -1 after Dispose closed
    // the wake-up descriptor; until when the worker stands back; the eventfd a drain on another
    // thread writes to wake it, and its poller (socket descriptor, eventfd), made on first use.
    private int _directThread;
    private long _directUntilMs;
    private volatile int _directWake = -1;
    private bool _directPolling;
    private long _lastSleepTicks;
    private long _takenSinceSleep; // messages drains took since the direct reader last slept (under the gate)

    /// <summary>How long a direct reader in a one-at-a-time exchange looks again before it sleeps
    /// (0: never; tests and measurements change it).</summary>
    internal static int SpinMicros { get; set; } = 50;

    /// <summary>An exchange counts as quick when the reader's last sleep was shorter than this (500 µs).</summary>
    private static readonly long SpinWhenSleptBelowTicks = System.Diagnostics.Stopwatch.Frequency / 2000;

    private ZlinkPoller? _directPoller;
    private bool _closed;
    private volatile bool _ended; // the queue was completed: drains stop early

    // Readers waiting on the queue now (ReceiveAsync, Incoming's ReadAsync / WaitToReadAsync).
    private int _watchers;

    // A send left the socket's events unread since the last drain or look (set and cleared under Gate).
    private volatile bool _unchecked;

    /// <param name="context">The context the ROUTER is made in.</param>
    /// <param name="serviceOf">Names the service of a message's routing id (for what is handed back).</param>
    /// <param name="immediate">Connecting side (the gateway): IMMEDIATE, so a peer whose connection broke has
    /// no pipe to queue into while it reconnects, and a send to it is refused (ROUTER_MANDATORY) instead of
    /// waiting in a queue that dies with a peer that never comes back.</param>
    public SharedRouter(ZlinkContext context, Func<ReadOnlySpan<byte>, string> serviceOf, bool immediate = false)
    {
        Socket = context.CreateSocket(ZlinkSocketType.Router);
        _serviceOf = serviceOf;
        _reader = new WatchedReader(this);
        _tryReadOrCheck = TryReadOrCheck;
        Socket.SendHighWaterMark = 1_000_000;
        Socket.ReceiveHighWaterMark = Capacity;
        Socket.SetOption(SocketOption.RouterMandatory, 1);
        Socket.SetOption(SocketOption.RouterHandover, 1);
        if (immediate)
        {
            Socket.SetOption(SocketOption.Immediate, 1);
        }

        FileDescriptor = Socket.FileDescriptor;
    }

    /// <summary>Unread messages held at most (the ROUTER's receive high-water mark).</summary>
    public const int Capacity = 1_000_000;

    /// <summary>How long the worker keeps standing back after a direct reader's wait (its next call
    /// normally comes sooner; a reader that relies on the worker ends it at once).</summary>
    private const int StandBackMs = 200;

    /// <summary>How many messages <see cref="DrainLocked()"/> takes between two looks at the queue's count.</summary>
    private const int CountEvery = 256;

    /// <summary>How many messages a reader on the caller's thread takes from the socket at a time
    /// (<see cref="DrainLocked(int, int)"/>; tests make it small).</summary>
    internal static int ReaderBatch { get; set; } = 256;

    public Lock Gate { get; } = new();

    public ZlinkSocket Socket { get; }

    public int FileDescriptor { get; }

    /// <summary>The queue as the application reads it: a reader that waits is counted (so sends
    /// look at the socket's events for it), and one that finds it empty after unchecked sends looks first.</summary>
    public ChannelReader<ServiceMessage> Incoming => _reader;

    /// <summary>
    /// The next message: from the queue, else (when no other thread holds <see cref="Gate"/>)
    /// straight from the socket on the caller's thread, else the queue's wait. Taking what the
    /// socket holds here saves the hand-off through the worker thread; the order stays the
    /// socket's, as every message still passes through the queue under the gate.
    /// </summary>
    public ValueTask<ServiceMessage> ReceiveAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<ServiceMessage>(cancellationToken);
        }

        if (TryTakeNow(out ServiceMessage? m))
        {
            return new ValueTask<ServiceMessage>(m);
        }

        return WatchAsync(static (r, ct) => r.ReadAsync(ct), cancellationToken);
    }

    /// <summary>
    /// The next message, or false when <paramref name="timeout"/> passed, on the caller's thread:
    /// from the queue, else straight from the socket. While it waits, the first such reader
    /// (the direct reader) sleeps on the socket's descriptor itself and receives on its own
    /// thread, and the worker stands back from the descriptor (<see cref="WorkerStandsBack"/>):
    /// in steady state one thread, the reader's, wakes per batch. Other synchronous readers at the
    /// same time wait, counted, until a drain wakes them (<see cref="BlockingReads"/>). Either
    /// counts as a waiting reader, so sends look at the socket's events for it.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    public bool TryReceive(TimeSpan timeout, [MaybeNullWhen(false)] out ServiceMessage m)
    {
        int ms = BlockingReads.Milliseconds(timeout);
        if (TryTakeNow(out m))
        {
            // A reader that keeps finding messages keeps the worker standing back, as one that waits
            // does: it takes the socket's backlog a batch at a time itself (unless async readers
            // wait: they rely on the worker).
            long now = NowMs;
            if (Volatile.Read(ref _directUntilMs) - now < StandBackMs / 2 && Volatile.Read(ref _watchers) == 0)
            {
                Volatile.Write(ref _directUntilMs, now + StandBackMs);
            }

            return true;
        }

        int self = Environment.CurrentManagedThreadId;
        bool direct = Interlocked.CompareExchange(ref _directThread, self, 0) == 0;
        Interlocked.Increment(ref _watchers);
        try
        {
            if (direct)
            {
                return DirectWait(ms, out m);
            }

            NeedWorker(); // no reader waits on the socket now: the worker's drains must wake this one
            if (_unchecked)
            {
                CatchUp();
            }

            return _blocking.TryTake(_incoming.Reader, _tryReadOrCheck, ms, out m);
        }
        finally
        {
            Interlocked.Decrement(ref _watchers);
            if (direct)
            {
                LeaveDirect(self);
            }
        }
    }

    /// <summary>The direct reader's wait: on the socket's descriptor and <see cref="_directWake"/>
    /// (written by a drain on another thread, and by the end of the queue), receiving itself.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    private bool DirectWait(int ms, [MaybeNullWhen(false)] out ServiceMessage m)
    {
        long start = Environment.TickCount64;
        Volatile.Write(ref _directUntilMs, NowMs + StandBackMs);
        if (_directPoller is null)
        {
            int wake = Interop.Native.WakeEventCreate();
            if (wake < 0)
            {
                throw new InvalidOperationException($"eventfd() failed: errno {System.Runtime.InteropServices.Marshal.GetLastSystemError()} (out of descriptors?)");
            }

            var poller = new ZlinkPoller();
            poller.Add(FileDescriptor, PollEvents.PollIn);
            poller.Add(wake, PollEvents.PollIn);
            _directWake = wake;
            _directPoller = poller;
        }

        while (true)
        {
            if (_unchecked)
            {
                CatchUp();
            }

            int left = ms < 0 ? -1 : (int)Math.Max(0, ms - (Environment.TickCount64 - start));
            if (_incoming.Reader.TryRead(out m))
            {
                return true;
            }

            // The gate's holder is a send (it looks for this counted reader), a drain (it wakes
            // this reader when it took something) or a short use of the socket: waiting for it
            // is bounded by the caller's time.
            if (Gate.TryEnter(left < 0 ? Timeout.Infinite : left))
            {
                try
                {
                    DrainLocked(ReaderBatch, own: 1);
                }
                finally
                {
                    Gate.Exit();
                }

                if (_incoming.Reader.TryRead(out m))
                {
                    return true;
                }
            }

            if (_incoming.Reader.Completion.IsCompleted)
            {
                m = _incoming.Reader.ReadAsync().AsTask().GetAwaiter().GetResult(); // throws as ReceiveAsync does
                return true;
            }

            left = ms < 0 ? -1 : (int)Math.Max(0, ms - (Environment.TickCount64 - start));
            if (left == 0)
            {
                return false;
            }

            // A reader in a quick one-at-a-time exchange (its last sleep was short, and it took at
            // most one message since) looks again for up to SpinMicros before it sleeps: a sleep
            // and a wake-up cost more than the next message takes to come. A reader that takes
            // batches (a stream) or waits long (sparse traffic) sleeps at once.
            if (SpinMicros > 0 && _takenSinceSleep <= 1 && _lastSleepTicks < SpinWhenSleptBelowTicks && SpinBriefly(left))
            {
                continue;
            }

            Volatile.Write(ref _directPolling, true);
            _takenSinceSleep = 0; // (a drain on another thread may add to it meanwhile: a heuristic only)
            long slept = System.Diagnostics.Stopwatch.GetTimestamp();
            try
            {
                _directPoller.Poll(left);
            }
            finally
            {
                Volatile.Write(ref _directPolling, false);
                _lastSleepTicks = System.Diagnostics.Stopwatch.GetTimestamp() - slept;
            }

            if ((_directPoller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
            {
                Interop.Native.CounterRead(_directWake);
            }
        }
    }

    /// <summary>Looks at the descriptors without sleeping for up to <see cref="SpinMicros"/>; true when one is ready.</summary>
    private bool SpinBriefly(int leftMs)
    {
        _takenSinceSleep = 0; // a wait, as a sleep is: what comes after it is counted afresh
        long micros = leftMs < 0 ? SpinMicros : Math.Min(SpinMicros, leftMs * 1000L);
        long until = System.Diagnostics.Stopwatch.GetTimestamp() + micros * System.Diagnostics.Stopwatch.Frequency / 1_000_000;
        do
        {
            if (_directPoller!.Poll(0) > 0)
            {
                if ((_directPoller.GetReturnedEvents(1) & PollEvents.PollIn) != 0)
                {
                    Interop.Native.CounterRead(_directWake);
                }

                return true;
            }

            Thread.SpinWait(20);
        }
        while (System.Diagnostics.Stopwatch.GetTimestamp() < until);
        return false;
    }
    /// <summary>Ends the direct reader's turn; after <see cref="Dispose"/>, the last of the two closes the wake-up descriptor.</summary>
    private void LeaveDirect(int self)
    {
        Volatile.Write(ref _directUntilMs, NowMs + StandBackMs);
        Interlocked.CompareExchange(ref _directThread, 0, self);
        if (Volatile.Read(ref _watchers) != 0)
        {
            // Other readers wait on the queue, and no thread waits on the socket now: the worker
            // takes it back. (A reader counted after this look sees no direct reader, and asks itself.)
            NeedWorker();
        }

        if (Volatile.Read(ref _closed))
        {
            lock (Gate) // the wake-up descriptor is written and closed under the gate only
            {
                if (Interlocked.CompareExchange(ref _directThread, -1, 0) == 0)
                {
                    CloseDirect();
                }
            }
        }
    }

    private void CloseDirect()
    {
        if (_directWake >= 0)
        {
            Interop.Native.CloseDescriptor(_directWake);
            _directWake = -1;
        }
    }

    /// <summary>Whether the worker should leave the socket's descriptor to a direct reader: one waits
    /// now, or waited within the last <see cref="StandBackMs"/> (between two of its calls).</summary>
    public bool WorkerStandsBack => Volatile.Read(ref _directThread) > 0 || NowMs < Volatile.Read(ref _directUntilMs);

    /// <summary>
    /// Whether the worker's periodic drain (its safety net against a lost edge) is for nothing now:
    /// a direct reader is inside its call and not asleep on the descriptor, so it receives what the
    /// socket holds itself before it sleeps. Its drains take the socket a batch after another as it
    /// reads; the worker's would move the whole backlog into the queue at once.
    /// </summary>
    public bool DirectReaderBusy => Volatile.Read(ref _directThread) > 0 && !Volatile.Read(ref _directPolling);

    /// <summary>Set by the worker: makes it look at the descriptor again (it stood back).</summary>
    public Action? WorkerNeeded { get; set; }

    /// <summary>A reader that relies on the worker's drains (async, or a second synchronous one)
    /// is about to wait while no direct reader waits: the worker stops standing back now.</summary>
    private void NeedWorker()
    {
        if (Volatile.Read(ref _directThread) <= 0 && Volatile.Read(ref _directUntilMs) != 0)
        {
            Volatile.Write(ref _directUntilMs, 0);
            WorkerNeeded?.Invoke();
        }
    }

    private static long NowMs => Environment.TickCount64;

    /// <summary>From the queue, else from the socket when the gate is free (ReceiveAsync's first steps).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    private bool TryTakeNow([MaybeNullWhen(false)] out ServiceMessage m)
    {
        if (_incoming.Reader.TryRead(out m))
        {
            return true;
        }

        if (!Gate.TryEnter())
        {
            return false;
        }

        try
        {
            DrainLocked(ReaderBatch, own: 0);
        }
        finally
        {
            Gate.Exit();
        }

        return _incoming.Reader.TryRead(out m);
    }

    /// <summary>Waits on the queue as a counted reader, after looking at what unchecked sends left.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<T> WatchAsync<T>(Func<ChannelReader<ServiceMessage>, CancellationToken, ValueTask<T>> wait, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _watchers);
        try
        {
            NeedWorker();
            if (_unchecked)
            {
                CatchUp();
            }

            return await wait(_incoming.Reader, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            Interlocked.Decrement(ref _watchers);
        }
    }

    /// <summary>Looks at the socket's events for unchecked sends (a reader is counted already). The
    /// gate's holder, when there is one, is a send that will look itself (it reads the count after
    /// this reader's increment), one about to let go, or a drain: a short wait for it is enough, and
    /// the blocking enter after it is only a bound.</summary>
    private void CatchUp()
    {
        var spin = new SpinWait();
        bool held = false;
        while (!(held = Gate.TryEnter()) && !spin.NextSpinWillYield)
        {
            spin.SpinOnce();
        }

        if (!held)
        {
            Gate.Enter();
        }

        try
        {
            CheckLocked();
        }
        finally
        {
            Gate.Exit();
        }
    }

    /// <summary>Receives what is waiting when the socket's events say so (call under <see cref="Gate"/>).</summary>
    private void CheckLocked()
    {
        if (_unchecked && !Socket.IsDisposed)
        {
            if ((Socket.Events & PollEvents.PollIn) != 0)
            {
                DrainLocked();
            }

            _unchecked = false;
        }
    }

    private bool TryReadOrCheck([MaybeNullWhen(false)] out ServiceMessage m)
    {
        if (_incoming.Reader.TryRead(out m))
        {
            return true;
        }

        // Unchecked sends, or a worker that stands back with no reader on the socket now (the
        // messages wait there): this reader looks itself.
        bool alone = Volatile.Read(ref _directThread) <= 0 && Volatile.Read(ref _directUntilMs) != 0;
        if (!(_unchecked || alone) || !Gate.TryEnter())
        {
            return false;
        }

        try
        {
            if (alone)
            {
                NeedWorker();
                DrainLocked();
            }
            else
            {
                CheckLocked();
            }
        }
        finally
        {
            Gate.Exit();
        }

        return _incoming.Reader.TryRead(out m);
    }

    /// <summary>Receives every whole message waiting (call under <see cref="Gate"/>).</summary>
    public void DrainLocked() => DrainLocked(int.MaxValue, 0);

    /// <summary>
    /// Receives up to <paramref name="max"/> whole messages (call under <see cref="Gate"/>). A
    /// reader on the caller's thread takes a batch at a time: a backlog stays in the socket, where
    /// the high-water marks push back on the senders, instead of moving into this queue (and the
    /// collector's heap) at once. Stopping at the bound with more perhaps waiting leaves the
    /// socket unchecked, as a send does: a reader looks again before it waits. While more readers
    /// wait than <paramref name="own"/> (the caller, when it is counted) it takes everything, as
    /// they rely on it.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    private unsafe void DrainLocked(int max, int own)
    {
        // At Capacity unread messages it stops taking more: they wait in the socket, whose
        // high-water mark then pushes back on the senders, instead of growing this queue. The
        // queue's count (a walk over its segments) is read once per CountEvery messages: it can
        // pass Capacity by fewer than CountEvery.
        if (Socket.IsDisposed)
        {
            return;
        }

        int n = 0;
        try
        {
            // One hold of the socket and of the frame for the whole batch (every use is under the gate).
            using SocketLease socket = Socket.Hold("TryReceive");
            using HandleLease frame = _frame.Lease();
            var msg = (ZlinkMsg*)frame.Value;
            for (; ; n++)
            {
                if (n % CountEvery == 0 && (_incoming.Reader.Count >= Capacity || _ended))
                {
                    // Full: what stays in the socket is looked at again by the next drain. Ended:
                    // nobody is given anything more (a flood would keep a drain going).
                    return;
                }

                if (n == max)
                {
                    _unchecked = true;
                    Interlocked.MemoryBarrier(); // as a send: mark, then read the count (see the class)
                    if (Volatile.Read(ref _watchers) <= own)
                    {
                        return;
                    }

                    max = int.MaxValue;
                }

                if (!ZlinkSocket.TryReceiveHeld(socket.Value, msg))
                {
                    _unchecked = false; // it ended at "nothing more": no wake-up is left unseen
                    return;
                }

                Take(socket.Value, msg);
            }
        }
        finally
        {
            _takenSinceSleep += n;
            if (n != 0)
            {
                WakeReaders(); // synchronous readers (TryReceive) wait on these, not on the queue
            }
        }
    }

    /// <summary>Wakes the synchronous readers: the direct one (unless it is the caller) and the others
    /// (call under <see cref="Gate"/>: the direct reader's descriptor is closed under it).</summary>
    private void WakeReaders()
    {
        _blocking.Signal();
        int direct = Volatile.Read(ref _directThread);
        int wake = _directWake;
        if (direct > 0 && direct != Environment.CurrentManagedThreadId && wake >= 0)
        {
            Interop.Native.CounterAdd(wake, 1);
        }
    }

    /// <summary>Queues the message whose first frame <paramref name="msg"/> holds (<see cref="_frame"/>, held).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    private unsafe void Take(nint socket, ZlinkMsg* msg)
    {
        ReadOnlySpan<byte> rid = FrameData(msg);
        ServiceMessage m = ServiceMessage.Rent(_serviceOf(rid), rid);
        while (Native.MsgMore(msg) != 0)
        {
            // A message's later frames arrive with its first: one is always there.
            if (!ZlinkSocket.TryReceiveHeld(socket, msg))
            {
                m.Dispose();
                throw new InvalidOperationException("the ROUTER gave the first frames of a message without the rest");
            }

            m.AddPart(FrameData(msg));
        }

        Received++;
        if (!_incoming.Writer.TryWrite(m))
        {
            m.Dispose(); // the router is closing: nobody reads any more
        }
    }

    private static unsafe ReadOnlySpan<byte> FrameData(ZlinkMsg* msg) => new(Native.MsgData(msg), checked((int)Native.MsgSize(msg)));

    /// <summary>Sends [rid][parts…] (call under <see cref="Gate"/>). False: no such peer (yet), or
    /// it stayed full for <paramref name="patienceMs"/>.</summary>
    public bool TrySendLocked(ReadOnlySpan<byte> rid, ReadOnlySpan<ReadOnlyMemory<byte>> parts, int patienceMs) =>
        TrySendLocked(rid, default, parts, multipart: true, patienceMs);

    /// <summary>Sends [rid][payload] (call under <see cref="Gate"/>); as the multipart form.</summary>
    public bool TrySendLocked(ReadOnlySpan<byte> rid, ReadOnlySpan<byte> payload, int patienceMs) =>
        TrySendLocked(rid, payload, default, multipart: false, patienceMs);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    private bool TrySendLocked(ReadOnlySpan<byte> rid, ReadOnlySpan<byte> payload, ReadOnlySpan<ReadOnlyMemory<byte>> parts, bool multipart, int patienceMs)
    {
        long deadline = 0;
        while (true)
        {
            try
            {
                if (SendOnce(rid, payload, parts, multipart))
                {
                    break;
                }
            }
            catch (HostUnreachableException)
            {
                return false;
            }

            // Full (high-water mark): nothing of the message stayed selected; retry it whole.
            long now = Environment.TickCount64;
            if (deadline == 0)
            {
                deadline = now + patienceMs;
            }
            else if (now >= deadline)
            {
                return false;
            }

            DrainLocked();
            Thread.Sleep(1);
        }

        // The look at the socket's events (a system call) is left to whoever needs it: a waiting
        // reader's, made here; else the next reader that finds the queue empty (see the class).
        _unchecked = true;
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _watchers) != 0)
        {
            CheckLocked();
        }

        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message (see the class)
    private bool SendOnce(ReadOnlySpan<byte> rid, ReadOnlySpan<byte> payload, ReadOnlySpan<ReadOnlyMemory<byte>> parts, bool multipart)
    {
        using SocketLease socket = Socket.Hold("TrySend"); // one hold for every frame (under the gate)
        if (!ZlinkSocket.TrySendHeld(socket.Value, rid, SendFlags.SendMore))
        {
            return false;
        }

        if (!multipart)
        {
            return ZlinkSocket.TrySendHeld(socket.Value, payload, SendFlags.None);
        }

        for (int i = 0; i < parts.Length; i++)
        {
            if (!ZlinkSocket.TrySendHeld(socket.Value, parts[i].Span, i + 1 < parts.Length ? SendFlags.SendMore : SendFlags.None))
            {
                if (i == 0)
                {
                    return false;
                }

                // A later part refused after the first was taken cannot happen (the library takes a
                // message's later frames once it took its first); say so rather than lose it.
                throw new InvalidOperationException($"the ROUTER refused part {i} of a message whose first part it took");
            }
        }

        return true;
    }

    public void Complete() => Complete(null);

    /// <summary>Ends the queue: what it holds stays readable, then reads end (with <paramref name="reason"/>
    /// when given); messages received later are dropped.</summary>
    public void Complete(string? reason)
    {
        _ended = true;
        _incoming.Writer.TryComplete(reason is null ? null : new ChannelClosedException(reason));
        lock (Gate) // the wake-up descriptor is written and closed under the gate only
        {
            WakeReaders();
        }
    }

    /// <summary>Messages received from the socket since it was made (read and written under <see cref="Gate"/>).</summary>
    public long Received { get; private set; }

    public void Dispose()
    {
        lock (Gate)
        {
            _incoming.Writer.TryComplete();
            Socket.Dispose();
            _frame.Dispose();
            WakeReaders();
            Volatile.Write(ref _closed, true);
            if (Interlocked.CompareExchange(ref _directThread, -1, 0) == 0)
            {
                CloseDirect();
            }
        }

        while (_incoming.Reader.TryRead(out ServiceMessage? m))
        {
            m.Dispose();
        }
    }

    /// <summary>The queue's reader as handed out: reads as the channel's, waits as a counted reader.</summary>
    private sealed class WatchedReader(SharedRouter router) : ChannelReader<ServiceMessage>
    {
        private ChannelReader<ServiceMessage> Inner => router._incoming.Reader;

        public override Task Completion => Inner.Completion;

        public override bool CanCount => Inner.CanCount;

        public override bool CanPeek => Inner.CanPeek;

        public override int Count => Inner.Count;

        public override bool TryRead([MaybeNullWhen(false)] out ServiceMessage item) => router.TryReadOrCheck(out item);

        public override bool TryPeek([MaybeNullWhen(false)] out ServiceMessage item) => Inner.TryPeek(out item);

        public override ValueTask<bool> WaitToReadAsync(CancellationToken cancellationToken = default) =>
            Inner.TryPeek(out _) ? new ValueTask<bool>(true) : router.WatchAsync(static (r, ct) => r.WaitToReadAsync(ct), cancellationToken);

        public override ValueTask<ServiceMessage> ReadAsync(CancellationToken cancellationToken = default) =>
            router.TryReadOrCheck(out ServiceMessage? m) ? new ValueTask<ServiceMessage>(m) : router.WatchAsync(static (r, ct) => r.ReadAsync(ct), cancellationToken);
    }
}
