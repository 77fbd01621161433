// The duplex channel API over an engine: application code reads connection events and packets
// from one ChannelReader and writes to connections from any thread, with no callbacks.
//
// Receive side: every shard's handler writes its events to one unbounded channel, so a connection
// event is never dropped and never waits. Packets count against the shard's receive capacity,
// in packets and in bytes: when a shard has that many packets (or bytes) waiting in the reader,
// it stops reading its socket (see EngineShard.Pause.cs) until the reader has taken half of them,
// so a slow reader holds the peers back through TCP instead of losing packets or growing memory.
//
// End: the writer completes once the engine's Stopped task has completed, i.e. after every shard
// has ended its connections (each Disconnected written once, by the shard, before it exits), with
// the engine's Fault when there is one.
using System.Buffers;
using System.Threading.Channels;

namespace NetZlink.Engine;

/// <summary>
/// An engine's events and packets as a <see cref="ChannelReader{T}"/>, and writes to its
/// connections from any thread. Made by <see cref="StreamEngine.StartChannel"/>, which starts the
/// engine with it. <see cref="Reader"/> completes when the engine stops (with
/// <see cref="StreamEngine.Fault"/> as its exception when there is one), after every established
/// connection's single <see cref="EngineEventKind.Disconnected"/>, so <c>await foreach</c> ends.
/// </summary>
/// <example>
/// <code>
/// await using var engine = new ClientEngine(1, new EngineOptions { Endpoints = ["tcp://127.0.0.1:5555"] });
/// EngineChannel channel = engine.StartChannel();
/// await foreach (EngineEvent e in channel.Reader.ReadAllAsync())
/// {
///     using (e)
///     {
///         if (e.Kind == EngineEventKind.Connected) await channel.WriteAsync(e.Connection, request);
///         else if (e.Kind == EngineEventKind.Packet) { Handle(e.Packet); await engine.StopAsync(); }
///     }
/// }
/// </code>
/// </example>
public sealed class EngineChannel : IDisposable, IAsyncDisposable
{
    // One counter per 64-byte line: the shards increment theirs while the reader decrements.
    private const int CounterStride = 16;

    private readonly StreamEngine _engine;
    private readonly Channel<EngineEvent> _events;
    private readonly EventReader _reader;
    private readonly int _capacity;
    private readonly int _resumeAt;
    private readonly long _byteCapacity;
    private readonly long _resumeAtBytes;
    private readonly int _pipeCapacity;
    private readonly bool _pipes;
    private readonly int[] _queued;
    private readonly long[] _queuedBytes;
    private readonly EngineShard?[] _shards;
    private long _pauses;
    private long _buffersOut;
    private long _discarded;
    private int _disposed;

    internal EngineChannel(StreamEngine engine, EngineChannelOptions options)
    {
        options.Validate();
        _engine = engine;
        _capacity = options.ReceiveCapacityPerShard;
        _resumeAt = _capacity / 2;
        _byteCapacity = options.ReceiveBytesPerShard;
        _resumeAtBytes = _byteCapacity / 2;
        _pipes = options.ConnectionPipes;
        _pipeCapacity = options.PipeCapacity;
        _queued = new int[engine.ShardCount * CounterStride];
        _queuedBytes = new long[engine.ShardCount * (CounterStride / 2)];
        _shards = new EngineShard?[engine.ShardCount];
        _events = Channel.CreateUnbounded<EngineEvent>(new UnboundedChannelOptions { SingleReader = false, SingleWriter = false });
        _reader = new EventReader(this);
    }

    /// <summary>
    /// Connection events and packets, in order per connection: <see cref="EngineEventKind.Connected"/>
    /// first, then its packets, then one <see cref="EngineEventKind.Disconnected"/> (or a single
    /// <see cref="EngineEventKind.ConnectFailed"/> for a client connection that never came up).
    /// Dispose each packet event once read.
    /// </summary>
    public ChannelReader<EngineEvent> Reader => _reader;

    /// <summary>The engine this channel drives.</summary>
    public StreamEngine Engine => _engine;

    /// <summary>
    /// How many times a shard stopped reading because <see cref="EngineChannelOptions.ReceiveCapacityPerShard"/>
    /// packets (or <see cref="EngineChannelOptions.ReceiveBytesPerShard"/> bytes) were waiting in the
    /// reader (each pause lasts until the reader has taken half of them).
    /// </summary>
    public long ReceivePauses => Interlocked.Read(ref _pauses);

    /// <summary>Packet events written to the reader whose buffer has not been given back yet (read or not).</summary>
    internal long BuffersOut => Interlocked.Read(ref _buffersOut);

    /// <summary>Packets that arrived after <see cref="Dispose"/>, never written to the reader.</summary>
    public long DiscardedAfterDispose => Interlocked.Read(ref _discarded);

    /// <summary>
    /// Posts a frame to the connection from any thread without waiting: <see cref="StreamEngine.TrySend"/>
    /// (false when there is no room now or the engine is not running).
    /// </summary>
    public bool TrySend(Connection connection, ReadOnlySpan<byte> frame) => _engine.TrySend(connection, frame);

    /// <summary>
    /// Posts a frame to the connection from any thread, waiting without blocking for posting
    /// capacity: <see cref="StreamEngine.SendAsync"/> (false when the engine is not running or stops while waiting).
    /// </summary>
    public ValueTask<bool> SendAsync(Connection connection, ReadOnlyMemory<byte> frame, CancellationToken cancellationToken = default)
        => _engine.SendAsync(connection, frame, cancellationToken);

    /// <summary>
    /// Drains the engine (<see cref="StreamEngine.DrainAsync"/>): writes are refused from now on,
    /// every write already accepted is sent or counted as dropped, and the engine stops by the
    /// deadline; <see cref="Reader"/> still delivers every event up to each connection's
    /// <see cref="EngineEventKind.Disconnected"/> and then completes.
    /// </summary>
    /// <returns>True when everything accepted was flushed before the deadline.</returns>
    public Task<bool> DrainAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
        => _engine.DrainAsync(timeout, cancellationToken);

    /// <summary>
    /// Says the application wants no more packets and stops the engine (waiting up to
    /// <see cref="StreamEngine.DisposeTimeout"/>). Packets that arrive from now on are given back
    /// to the pool unread (<see cref="DiscardedAfterDispose"/>); events already in the reader, and
    /// every connection event (each connection's <see cref="EngineEventKind.Disconnected"/>
    /// included), stay readable, and the reader completes as for any stop. Idempotent.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _ = _engine.Stop(StreamEngine.DisposeTimeout);
        }
    }

    /// <summary>Like <see cref="Dispose"/>, waiting for the engine asynchronously.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            try
            {
                await _engine.StopAsync().WaitAsync(StreamEngine.DisposeTimeout).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }
    }

    internal IConnectionHandler CreateShardHandler(EngineShard shard)
    {
        _shards[shard.Index] = shard;
        int counter = shard.Index * CounterStride;
        var handler = new ShardHandler(this, counter, shard.SlotCount);
        shard.SetResumeTest(() => handler.PipesCaughtUp()
            && ((Volatile.Read(ref _queued[counter]) <= _resumeAt && Interlocked.Read(ref _queuedBytes[counter / 2]) <= _resumeAtBytes) || Volatile.Read(ref _disposed) != 0));
        return handler;
    }

    /// <summary>After the engine started: the reader completes when it stops.</summary>
    internal void OnEngineStarted()
        => _ = _engine.Stopped.ContinueWith(static (_, state) => ((EngineChannel)state!).Complete(), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    internal void BufferReturned() => Interlocked.Decrement(ref _buffersOut);

    private void Complete() => _events.Writer.TryComplete(_engine.Fault);

    private void Write(EngineEvent e)
    {
        if (!_events.Writer.TryWrite(e))
        {
            // Only after the engine stopped, which ends its shards first: cannot happen, but never leak.
            e.Dispose();
        }
    }

    /// <summary>The reader took an event: a packet gives its shard's capacity back, and wakes the shard when it may read again.</summary>
    private void Taken(in EngineEvent e)
    {
        if (e.Kind == EngineEventKind.Packet)
        {
            int shard = e.Connection.Shard;
            long length = e.Packet.Length;
            long bytes = Interlocked.Add(ref _queuedBytes[shard * (CounterStride / 2)], -length);
            if (Interlocked.Decrement(ref _queued[shard * CounterStride]) == _resumeAt
                || (bytes <= _resumeAtBytes && bytes + length > _resumeAtBytes))
            {
                _shards[shard]?.RequestPass();
            }
        }
    }

    private sealed class ShardHandler(EngineChannel owner, int counter, int slots) : IConnectionHandler
    {
        private readonly ConnectionPipe?[]? _pipes = owner._pipes ? new ConnectionPipe?[slots] : null;
        private readonly List<ConnectionPipe> _blocked = new();

        public void OnConnected(EngineShard shard, Connection connection)
        {
            ConnectionPipe? pipe = null;
            if (_pipes is not null)
            {
                pipe = new ConnectionPipe(owner._engine, shard, connection, owner._pipeCapacity);
                _pipes[connection.Slot] = pipe;
            }

            owner.Write(EngineEvent.Connected(connection, pipe));
            pipe?.StartOutput();
        }

        public void OnConnectFailed(EngineShard shard, Connection connection, ConnectFailure failure) => owner.Write(EngineEvent.ConnectFailed(connection, failure));

        public void OnPacket(EngineShard shard, Connection connection, ReadOnlySpan<byte> packet)
        {
            if (_pipes is not null)
            {
                ConnectionPipe pipe = _pipes[connection.Slot]!;
                if (!pipe.Deliver(packet) && Volatile.Read(ref owner._disposed) == 0)
                {
                    if (!_blocked.Contains(pipe))
                    {
                        _blocked.Add(pipe);
                    }

                    if (shard.PauseReceiving())
                    {
                        Interlocked.Increment(ref owner._pauses);
                    }
                }

                return;
            }

            if (Volatile.Read(ref owner._disposed) != 0)
            {
                Interlocked.Increment(ref owner._discarded);
                return;
            }

            EngineEvent received = EngineEvent.ForPacket(connection, owner, packet);
            Interlocked.Increment(ref owner._buffersOut);
            bool full = Interlocked.Increment(ref owner._queued[counter]) >= owner._capacity;
            full |= Interlocked.Add(ref owner._queuedBytes[counter / 2], packet.Length) >= owner._byteCapacity;
            if (full && shard.PauseReceiving())
            {
                Interlocked.Increment(ref owner._pauses);
            }

            owner.Write(received);
        }

        public void OnDisconnected(EngineShard shard, Connection connection, ConnectionEndReason reason, int lostBytes)
        {
            if (_pipes is not null)
            {
                ConnectionPipe pipe = _pipes[connection.Slot]!;
                _pipes[connection.Slot] = null;
                _ = _blocked.Remove(pipe);
                pipe.End();
            }

            owner.Write(EngineEvent.Disconnected(connection, reason, lostBytes));
        }

        public void OnReconnecting(EngineShard shard, Connection connection, int attempt, TimeSpan delay)
            => owner.Write(EngineEvent.Reconnecting(connection, attempt, delay));

        public void OnPass(EngineShard shard)
        {
        }

        /// <summary>Shard thread (the resume test): flushes what waited behind completed flushes; true when no pipe holds the shard back.</summary>
        public bool PipesCaughtUp()
        {
            for (int i = _blocked.Count - 1; i >= 0; i--)
            {
                ConnectionPipe pipe = _blocked[i];
                if (!pipe.Blocked)
                {
                    pipe.FlushLeftover();
                }

                if (!pipe.Blocked)
                {
                    _blocked.RemoveAt(i);
                }
            }

            return _blocked.Count == 0 || Volatile.Read(ref owner._disposed) != 0;
        }
    }

    private sealed class EventReader(EngineChannel owner) : ChannelReader<EngineEvent>
    {
        public override Task Completion => owner._events.Reader.Completion;

        public override bool CanCount => true;

        public override bool CanPeek => true;

        public override int Count => owner._events.Reader.Count;

        public override bool TryRead(out EngineEvent item)
        {
            if (!owner._events.Reader.TryRead(out item))
            {
                return false;
            }

            owner.Taken(in item);
            return true;
        }

        public override bool TryPeek(out EngineEvent item) => owner._events.Reader.TryPeek(out item);

        public override ValueTask<bool> WaitToReadAsync(CancellationToken cancellationToken = default)
            => owner._events.Reader.WaitToReadAsync(cancellationToken);
    }
}
