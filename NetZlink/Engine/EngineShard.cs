// One worker of the ClientEngine: a named thread that owns one STREAM socket and every
// connection assigned to it, and drives them as non-blocking state machines.
//
// The loop, each pass: take frames posted by other threads; start, time out and retry connect
// attempts; receive up to MaxMessagesPerPass messages (each [id][payload]: 0x01/0x00 events or
// stream bytes cut into packets by the framer); let the handler send; retry frames the socket
// refused. Every native call is one DONTWAIT try; what would block is resumed on a later pass.
// A pass with nothing to do sleeps in zlink_poll on the socket and an eventfd that other threads
// write to wake it, so an idle engine uses no CPU.
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

    private readonly ClientEngine _engine;
    private readonly EngineOptions _options;
    private readonly int _shardCount;
    private readonly ConnectionSlot[] _slots;
    private readonly byte[] _receiveBuffer;
    private readonly byte[] _sendScratch;
    private readonly System.Buffers.ArrayPool<byte> _pool;
    private readonly PacketReassembler _reassembler;
    private readonly ConcurrentQueue<PostedFrame> _posted = new();
    private readonly int _wakeFd;
    private IConnectionHandler _handler = null!;
    private nint _socket;
    private Thread? _thread;
    private int _sleeping;
    private volatile bool _stopRequested;
    internal ShardCounters Counters;

    internal EngineShard(ClientEngine engine, EngineOptions options, int index, int shardCount, int slotCount)
    {
        _engine = engine;
        _options = options;
        Index = index;
        _shardCount = shardCount;
        _slots = new ConnectionSlot[slotCount];
        _receiveBuffer = GC.AllocateArray<byte>(options.ReceiveChunkSize, pinned: true);
        _sendScratch = GC.AllocateArray<byte>(options.SendScratchSize, pinned: true);
        _pool = System.Buffers.ArrayPool<byte>.Create(Math.Max(options.MaxPacketSize, options.MaxPendingBytesPerConnection), slotCount + 16);
        _reassembler = new PacketReassembler(options.Framer, options.MaxPacketSize, _pool);
        _waiting = new List<int>(Math.Min(slotCount, options.ConnectConcurrency) + 16);
        _pendingSends = new List<int>(64);
        _wakeFd = LibcMethods.eventfd(0, LibcMethods.EFD_NONBLOCK | LibcMethods.EFD_CLOEXEC);
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

    /// <summary>The engine-wide connection for one of this shard's slots.</summary>
    public Connection ConnectionAt(int slot) => new(slot * _shardCount + Index, Index, slot);

    /// <summary>True while the connection in <paramref name="slot"/> is established.</summary>
    public bool IsConnected(int slot) => _slots[slot].State == ConnectionState.Connected;

    internal bool IsRunning => _thread is { IsAlive: true };

    internal void Start(IConnectionHandler handler, nint socket)
    {
        _handler = handler;
        _socket = socket;
        _thread = new Thread(Run)
        {
            IsBackground = true,
            Name = $"{_options.ThreadNamePrefix}-{Index}",
        };
        _thread.Start();
    }

    internal void RequestStop()
    {
        _stopRequested = true;
        Wake();
    }

    internal bool Join(TimeSpan timeout) => _thread is null || _thread.Join(timeout);

    internal void Post(int slot, byte[] rented, int length)
    {
        _posted.Enqueue(new PostedFrame(slot, rented, length));
        Wake();
    }

    private void Wake()
    {
        // Pairs with the Exchange in Sleep: either the shard sees the queued item before it
        // sleeps, or we see it sleeping and write the eventfd. Skipping the write while the
        // shard is busy keeps posting to one syscall per sleep at most.
        if (Volatile.Read(ref _sleeping) == 1)
        {
            ulong one = 1;
            _ = LibcMethods.write(_wakeFd, &one, sizeof(ulong));
        }
    }

    private void Run()
    {
        Exception? fault = null;
        try
        {
            while (!_stopRequested)
            {
                long sentBefore = Counters.FramesSent + Counters.FramesQueued;
                bool busy = DrainPosted();
                busy |= AdvanceConnects(Stopwatch.GetTimestamp());
                busy |= ReceiveBatch();
                _handler.OnPass(this);
                busy |= RetryPendingSends();
                busy |= Counters.FramesSent + Counters.FramesQueued != sentBefore;
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
            ReleaseAll();
            _engine.OnShardExited(this, fault);
        }
    }

    private void Sleep()
    {
        int timeoutMs = _pendingSends.Count > 0 ? 1 : NextTimerDelayMs();
        Interlocked.Exchange(ref _sleeping, 1);
        if (!_posted.IsEmpty || _stopRequested)
        {
            Volatile.Write(ref _sleeping, 0);
            return;
        }

        ZlinkPollItem* items = stackalloc ZlinkPollItem[2];
        items[0] = new ZlinkPollItem { Socket = _socket, Events = ZlinkConstants.POLLIN };
        items[1] = new ZlinkPollItem { Socket = 0, Fd = _wakeFd, Events = ZlinkConstants.POLLIN };
        int rc = NativeMethods.zlink_poll(items, 2, timeoutMs);
        Volatile.Write(ref _sleeping, 0);
        if (rc < 0)
        {
            int errno = NativeMethods.zlink_errno();
            if (errno == ZlinkConstants.ETERM)
            {
                _stopRequested = true;
                return;
            }

            if (errno != ZlinkConstants.EINTR)
            {
                EngineErrors.Throw($"zlink_poll on shard {Index}", errno);
            }
        }

        if ((items[1].Revents & ZlinkConstants.POLLIN) != 0)
        {
            ulong drained;
            _ = LibcMethods.read(_wakeFd, &drained, sizeof(ulong));
        }
    }

    private bool DrainPosted()
    {
        bool any = false;
        while (_posted.TryDequeue(out PostedFrame frame))
        {
            any = true;
            SendResult result = Send(ConnectionAt(frame.Slot), frame.Buffer.AsSpan(0, frame.Length));
            if (result is SendResult.Closed or SendResult.Full)
            {
                _engine.CountDroppedPost();
            }

            System.Buffers.ArrayPool<byte>.Shared.Return(frame.Buffer);
        }

        return any;
    }

    private void ReleaseAll()
    {
        for (int slot = 0; slot < _slots.Length; slot++)
        {
            ref ConnectionSlot s = ref _slots[slot];
            ReturnBuffers(ref s);
            if (s.State == ConnectionState.Connected)
            {
                s.State = ConnectionState.Closed;
                _handler?.OnDisconnected(this, ConnectionAt(slot), ConnectionEndReason.EngineStopped, 0);
            }
        }

        while (_posted.TryDequeue(out PostedFrame frame))
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(frame.Buffer);
        }

        if (_socket != 0)
        {
            _ = NativeMethods.zlink_close(_socket);
            _socket = 0;
        }

        _ = LibcMethods.close(_wakeFd);
    }

    private void ReturnBuffers(ref ConnectionSlot s)
    {
        _reassembler.Release(ref s.Partial);
        if (s.Pending is not null)
        {
            _pool.Return(s.Pending);
            s.Pending = null;
        }

        s.PendingLength = 0;
    }

    private readonly record struct PostedFrame(int Slot, byte[] Buffer, int Length);
}
