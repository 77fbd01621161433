using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>
/// The ROUTER socket of a gateway or receiver, shared by its worker thread (which waits on the
/// socket's descriptor and receives) and by any thread that sends: every use is under
/// <see cref="Gate"/>. Whoever holds the gate last reads the socket's events and receives what is
/// waiting, so a wake-up the descriptor gave to a send is never lost.
/// </summary>
internal sealed class SharedRouter : IDisposable
{
    private readonly ZlinkMessage _frame = new();
    private readonly Channel<ServiceMessage> _incoming =
        Channel.CreateUnbounded<ServiceMessage>(new UnboundedChannelOptions { SingleWriter = false, SingleReader = false });
    private readonly Func<ReadOnlySpan<byte>, string> _serviceOf;

    public SharedRouter(ZlinkContext context, Func<ReadOnlySpan<byte>, string> serviceOf)
    {
        Socket = context.CreateSocket(ZlinkSocketType.Router);
        _serviceOf = serviceOf;
        Socket.SendHighWaterMark = 1_000_000;
        Socket.ReceiveHighWaterMark = Capacity;
        Socket.SetOption(SocketOption.RouterMandatory, 1);
        Socket.SetOption(SocketOption.RouterHandover, 1);
        FileDescriptor = Socket.FileDescriptor;
    }

    /// <summary>Unread messages held at most (the ROUTER's receive high-water mark).</summary>
    public const int Capacity = 1_000_000;

    /// <summary>How many messages <see cref="DrainLocked"/> takes between two looks at the queue's count.</summary>
    private const int CountEvery = 256;

    public Lock Gate { get; } = new();

    public ZlinkSocket Socket { get; }

    public int FileDescriptor { get; }

    public ChannelReader<ServiceMessage> Incoming => _incoming.Reader;

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

        return _incoming.Reader.ReadAsync(cancellationToken);
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

        for (int n = 0; (n % CountEvery != 0 || _incoming.Reader.Count < Capacity) && Socket.TryReceive(_frame); n++)
        {
            ServiceMessage m = ServiceMessage.Rent(_serviceOf(_frame.Data), _frame.Data);
            while (_frame.More)
            {
                Socket.Receive(_frame);
                m.AddPart(_frame.Data);
            }

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

        if ((Socket.Events & PollEvents.PollIn) != 0)
        {
            DrainLocked();
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
}
