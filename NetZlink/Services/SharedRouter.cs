using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading.Channels;

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
/// </remarks>
internal sealed class SharedRouter : IDisposable
{
    private readonly ZlinkMessage _frame = new();
    private readonly Channel<ServiceMessage> _incoming =
        Channel.CreateUnbounded<ServiceMessage>(new UnboundedChannelOptions { SingleWriter = false, SingleReader = false });
    private readonly Func<ReadOnlySpan<byte>, string> _serviceOf;
    private readonly WatchedReader _reader;

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

    /// <summary>How many messages <see cref="DrainLocked"/> takes between two looks at the queue's count.</summary>
    private const int CountEvery = 256;

    public Lock Gate { get; } = new();

    public ZlinkSocket Socket { get; }

    public int FileDescriptor { get; }

    /// <summary>The queue as the application reads it: a reader that waits is counted (so sends
    /// look at the socket's events for it), and one that finds it empty after unchecked sends looks first.</summary>
    public ChannelReader<ServiceMessage> Incoming => _reader;

    /// <summary>Sends skipped their look at the socket's events since the last drain (tests).</summary>
    internal bool Unchecked => _unchecked;

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

        if (_incoming.Reader.TryRead(out ServiceMessage? m))
        {
            return new ValueTask<ServiceMessage>(m);
        }

        if (Gate.TryEnter())
        {
            try
            {
                DrainLocked();
            }
            finally
            {
                Gate.Exit();
            }

            if (_incoming.Reader.TryRead(out m))
            {
                return new ValueTask<ServiceMessage>(m);
            }
        }

        return WatchAsync(static (r, ct) => r.ReadAsync(ct), cancellationToken);
    }

    /// <summary>Waits on the queue as a counted reader, after looking at what unchecked sends left.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<T> WatchAsync<T>(Func<ChannelReader<ServiceMessage>, CancellationToken, ValueTask<T>> wait, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _watchers);
        try
        {
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

        if (!_unchecked || !Gate.TryEnter())
        {
            return false;
        }

        try
        {
            CheckLocked();
        }
        finally
        {
            Gate.Exit();
        }

        return _incoming.Reader.TryRead(out m);
    }

    /// <summary>Receives every whole message waiting (call under <see cref="Gate"/>).</summary>
    public void DrainLocked()
    {
        // At Capacity unread messages it stops taking more: they wait in the socket, whose
        // high-water mark then pushes back on the senders, instead of growing this queue. The
        // queue's count (a walk over its segments) is read once per CountEvery messages: it can
        // pass Capacity by fewer than CountEvery.
        if (Socket.IsDisposed)
        {
            return;
        }

        for (int n = 0; ; n++)
        {
            if (n % CountEvery == 0 && _incoming.Reader.Count >= Capacity)
            {
                return; // full: what stays in the socket is looked at again by the next drain
            }

            if (!Socket.TryReceive(_frame))
            {
                _unchecked = false; // it ended at "nothing more": no wake-up is left unseen
                return;
            }

            ServiceMessage m = ServiceMessage.Rent(_serviceOf(_frame.Data), _frame.Data);
            while (_frame.More)
            {
                Socket.Receive(_frame);
                m.AddPart(_frame.Data);
            }

            Received++;
            if (!_incoming.Writer.TryWrite(m))
            {
                m.Dispose(); // the router is closing: nobody reads any more
            }
        }
    }

    /// <summary>Sends [rid][parts…] (call under <see cref="Gate"/>). False: no such peer (yet), or
    /// it stayed full for <paramref name="patienceMs"/>.</summary>
    public bool TrySendLocked(ReadOnlySpan<byte> rid, ReadOnlySpan<ReadOnlyMemory<byte>> parts, int patienceMs) =>
        TrySendLocked(rid, default, parts, multipart: true, patienceMs);

    /// <summary>Sends [rid][payload] (call under <see cref="Gate"/>); as the multipart form.</summary>
    public bool TrySendLocked(ReadOnlySpan<byte> rid, ReadOnlySpan<byte> payload, int patienceMs) =>
        TrySendLocked(rid, payload, default, multipart: false, patienceMs);

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

    private bool SendOnce(ReadOnlySpan<byte> rid, ReadOnlySpan<byte> payload, ReadOnlySpan<ReadOnlyMemory<byte>> parts, bool multipart)
    {
        if (!Socket.TrySend(rid, SendFlags.SendMore))
        {
            return false;
        }

        if (!multipart)
        {
            return Socket.TrySend(payload);
        }

        for (int i = 0; i < parts.Length; i++)
        {
            if (!Socket.TrySend(parts[i].Span, i + 1 < parts.Length ? SendFlags.SendMore : SendFlags.None))
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

    public void Complete() => _incoming.Writer.TryComplete();

    /// <summary>Ends the queue: what it holds stays readable, then reads end (with <paramref name="reason"/>
    /// when given); messages received later are dropped.</summary>
    public void Complete(string? reason) =>
        _incoming.Writer.TryComplete(reason is null ? null : new ChannelClosedException(reason));

    /// <summary>Messages received from the socket since it was made (read and written under <see cref="Gate"/>).</summary>
    public long Received { get; private set; }

    public void Dispose()
    {
        lock (Gate)
        {
            _incoming.Writer.TryComplete();
            Socket.Dispose();
            _frame.Dispose();
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
