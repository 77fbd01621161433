// What the client and the server engine share: a fixed set of shard threads, each owning one
// STREAM socket and the connections assigned to it, driven as non-blocking state machines; posting
// from other threads; counters; and the lifetime rules.
//
// Lifetime: from Start until the last shard thread has exited, the engine holds a reference on its
// context's native handle. Each shard closes its own socket (and monitor) on the way out, whatever
// stopped it (Stop/Dispose, a fault, or ETERM when the context is disposed or shut down under a
// running engine), and the last one gives the reference back; so disposing the context from any
// thread neither waits on the engine nor frees the context under it, and the final termination
// runs once nothing of the engine is left open.
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>
/// The shared part of <see cref="ClientEngine"/> and <see cref="ServerEngine"/>: shard threads,
/// posting from any thread (<see cref="TrySend"/>, <see cref="SendAsync"/>), counters, stop and
/// dispose. The contracts (threading, backpressure, posting, faults) are in docs/engine.md.
/// </summary>
public abstract class StreamEngine : IDisposable, IAsyncDisposable
{
    private readonly EngineOptions _options;
    private readonly ZlinkContext _context;
    private readonly bool _ownsContext;
    private readonly EngineShard[] _shards;
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Dictionary<int, long> _errors = new();
    private ContextHandle? _contextReference;
    private int _shardsRunning;
    private Exception? _fault;
    private volatile bool _faultStopped;
    private volatile bool _anyShardStopping;
    private int _started;
    private int _disposed;

    // The drain (single-flight): the first DrainAsync starts it with its deadline, later calls
    // join it. Set under _drainGate, which also orders it with the start (a drained engine never starts).
    private readonly object _drainGate = new();
    private Task<bool>? _drain;

    // True once a shard's socket fell back to Length framing (a library without BATCH): posted
    // frames are then also checked for the one-byte body 0x00 that framing cannot carry.
    private volatile bool _lengthFallback;

    /// <summary>
    /// Makes <paramref name="shardCount"/> shards with <paramref name="makeShard"/> (their threads
    /// start in <see cref="StartShards"/>); when one cannot be made, releases those made so far
    /// (each owns an eventfd) and the context it created, and rethrows.
    /// </summary>
    private protected StreamEngine(EngineOptions options, ZlinkContext? context, int shardCount, Func<StreamEngine, int, EngineShard> makeShard)
    {
        _options = options;
        Name = options.Name ?? GetType().Name;
        Logger = options.LoggerFactory?.CreateLogger(EngineLog.Category) ?? NullLogger.Instance;
        _ownsContext = context is null;
        _context = context ?? new ZlinkContext();
        _shards = new EngineShard[shardCount];
        try
        {
            for (int i = 0; i < shardCount; i++)
            {
                _shards[i] = makeShard(this, i);
            }
        }
        catch
        {
            foreach (EngineShard? made in _shards)
            {
                made?.ReleaseUnstarted();
            }

            if (_ownsContext)
            {
                _context.Dispose();
            }

            throw;
        }
    }

    /// <summary>Number of shard threads.</summary>
    public int ShardCount => _shards.Length;

    /// <summary>
    /// Completes when every shard thread has exited and closed its socket: after <see cref="Stop"/>,
    /// <see cref="Dispose"/>, a fault, or the termination of the engine's context.
    /// </summary>
    public Task Stopped => _stopped.Task;

    /// <summary>
    /// The first exception that stopped the engine, if any: an <see cref="InvalidOperationException"/>
    /// naming the shard, whose inner exception is what a handler threw or the native failure; a
    /// <see cref="ContextTerminatedException"/> when the engine's context was disposed or shut down
    /// while the shards ran (their live connections then end with
    /// <see cref="ConnectionEndReason.ContextTerminated"/>). Nothing is thrown on any thread.
    /// </summary>
    public Exception? Fault => Volatile.Read(ref _fault);

    /// <summary>
    /// Frames <see cref="TrySend"/> or <see cref="SendAsync"/> accepted that were dropped instead of
    /// sent (see <see cref="ReadSendQueueCounters"/> for the reasons).
    /// </summary>
    public long DroppedSends
    {
        get
        {
            SendQueueCounters c = ReadSendQueueCounters();
            return c.DroppedClosed + c.DroppedStopped + c.DroppedDrainDeadline;
        }
    }

    /// <summary>True from Start until the first shard thread stops (stop, fault or context termination).</summary>
    public bool IsRunning => Volatile.Read(ref _started) != 0 && Volatile.Read(ref _disposed) == 0 && !_stopped.Task.IsCompleted && !_anyShardStopping;

    private protected EngineOptions Options => _options;

    /// <summary><see cref="EngineOptions.Name"/>, or the engine's type name: in log events, span and metric attributes.</summary>
    internal string Name { get; }

    /// <summary>Where the engine's events go (<see cref="EngineOptions.LoggerFactory"/>); a null logger without one.</summary>
    internal ILogger Logger { get; }

    /// <summary>The most a pipe posts in one frame when it may cut (custom framers): the posting capacity, so that frames never wait for an empty connection.</summary>
    internal int MaxPostLength => _options.SendQueueCapacityPerConnection;

    /// <summary>True with the default framer: every frame is whole packets, which the native framing cuts.</summary>
    internal bool PacketFramed => _options.Framer is LengthPrefixFramer;

    private protected EngineShard[] Shards => _shards;

    /// <summary>True once a handler exception or a shard failure stopped the engine.</summary>
    internal bool FaultStopped => _faultStopped;

    /// <summary>
    /// Sends a frame to a connection from any thread, without blocking: the bytes are copied into a
    /// pooled buffer and queued to the connection's shard, which sends them on its next pass. The
    /// frame holds posting capacity until the native socket takes it: at most
    /// <see cref="EngineOptions.SendQueueCapacityPerConnection"/> bytes per connection and
    /// <see cref="EngineOptions.SendQueueCapacityPerShard"/> per shard. A capacity never refuses a frame
    /// for its size: a frame larger than it is accepted once the connection (and the shard) hold
    /// no other posted frame (docs/engine.md, "Frame sizes"). Every accepted frame is later
    /// either sent or counted as dropped (<see cref="ReadSendQueueCounters"/>): dropped when its
    /// connection is not established when its turn comes or ends first, or when the engine stops.
    /// </summary>
    /// <returns>
    /// True when accepted; false when there is no room now (a slow peer: retry later, or use
    /// <see cref="SendAsync"/> to wait) or the engine is not running (<see cref="IsRunning"/>).
    /// </returns>
    /// <exception cref="ArgumentException">The connection is not one of this engine's, or the frame is empty, or (with the
    /// default framer, <see cref="LengthPrefixFramer"/>) the frame is not whole packets with bodies of at least one byte.</exception>
    public bool TrySend(Connection connection, ReadOnlySpan<byte> frame)
        => TryPostCore(connection, frame) == EngineShard.PostStatus.Accepted;

    /// <summary>
    /// Like <see cref="TrySend"/>, but waits (asynchronously, no thread blocked) for posting
    /// capacity when the connection or its shard is full.
    /// </summary>
    /// <returns>True once accepted; false when the engine is not running or stops while waiting (nothing was accepted).</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first; nothing was accepted.</exception>
    /// <exception cref="ArgumentException">The connection is not one of this engine's, or the frame is empty, or (with the
    /// default framer, <see cref="LengthPrefixFramer"/>) the frame is not whole packets with bodies of at least one byte.</exception>
    public ValueTask<bool> SendAsync(Connection connection, ReadOnlyMemory<byte> frame, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        EngineShard.PostStatus status = TryPostCore(connection, frame.Span);
        return status switch
        {
            EngineShard.PostStatus.Accepted => new ValueTask<bool>(true),
            EngineShard.PostStatus.Closed => new ValueTask<bool>(false),
            _ => WaitAndPost(connection, frame, cancellationToken),
        };
    }

    /// <summary>Posting counters summed over shards now (see <see cref="SendQueueCounters"/>).</summary>
    public SendQueueCounters ReadSendQueueCounters()
    {
        long accepted = 0, sent = 0, closed = 0, stopped = 0, held = 0, deadline = 0, refused = 0;
        foreach (EngineShard shard in _shards)
        {
            // Accepted first: a frame counted as sent or dropped below was accepted before.
            accepted += shard.PostsAccepted;
        }

        foreach (EngineShard shard in _shards)
        {
            ref ShardCounters c = ref shard.Counters;
            sent += Volatile.Read(ref c.PostsSent);
            closed += Volatile.Read(ref c.PostsDroppedClosed);
            stopped += Volatile.Read(ref c.PostsDroppedStopped);
            deadline += Volatile.Read(ref c.PostsDroppedDeadline);
            refused += shard.RefusedDraining;
            held += shard.PostedBytesHeld;
        }

        return new SendQueueCounters(accepted, sent, closed, stopped, held) { DroppedDrainDeadline = deadline, RefusedDraining = refused };
    }

    private EngineShard.PostStatus TryPostCore(Connection connection, ReadOnlySpan<byte> frame)
    {
        EngineShard shard = ShardOf(connection);
        if (frame.IsEmpty)
        {
            // On a STREAM socket an empty payload means "close this connection"; a post never does that.
            throw new ArgumentException("An empty frame posts nothing: give at least one byte (to close a connection, call EngineShard.Close on its shard's thread).", nameof(frame));
        }

        if (_options.Framer is LengthPrefixFramer && PacketFrames.Problem(frame, _lengthFallback) is string problem)
        {
            throw new ArgumentException(problem, nameof(frame));
        }

        if (Volatile.Read(ref _started) == 0 || Volatile.Read(ref _disposed) != 0)
        {
            return EngineShard.PostStatus.Closed;
        }

        EngineShard.PostStatus status = shard.TrySend(connection.Slot, connection.Index, frame);
        if (status == EngineShard.PostStatus.Accepted)
        {
            shard.ObservePosted(connection, frame.Length);
        }

        return status;
    }

    private async ValueTask<bool> WaitAndPost(Connection connection, ReadOnlyMemory<byte> frame, CancellationToken cancellationToken)
    {
        EngineShard shard = _shards[connection.Shard];
        while (true)
        {
            Task room = shard.RoomSignal();
            EngineShard.PostStatus status = TryPostCore(connection, frame.Span);
            if (status != EngineShard.PostStatus.Full)
            {
                return status == EngineShard.PostStatus.Accepted;
            }

            await room.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    private EngineShard ShardOf(Connection connection)
    {
        if ((uint)connection.Shard >= (uint)_shards.Length
            || (uint)connection.Slot >= (uint)_shards[connection.Shard].SlotCount
            || !IsConnectionOfThisEngine(connection))
        {
            throw new ArgumentException(
                $"{connection} is not a connection of this engine ({_shards.Length} shards): use the Connection a handler was given.",
                nameof(connection));
        }

        return _shards[connection.Shard];
    }

    /// <summary>Beyond shard and slot ranges: whether the connection's index can be one of this engine's.</summary>
    private protected abstract bool IsConnectionOfThisEngine(Connection connection);

    /// <summary>
    /// Makes every shard run a pass (<see cref="IConnectionHandler.OnPass"/>) soon, from any thread:
    /// for a handler that acts on state changed outside the engine. Without it an idle shard sees
    /// such a change on its next wake-up, up to a quarter of a second later. A no-op once the
    /// engine has stopped.
    /// </summary>
    public void RequestPass()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            return;
        }

        foreach (EngineShard shard in _shards)
        {
            shard.RequestPass();
        }
    }

    /// <summary>Sums the shards' counters now (each read without locks).</summary>
    public EngineCounters ReadCounters()
    {
        long connected = 0, failed = 0, timedOut = 0, packets = 0, bytesIn = 0, frames = 0, bytesOut = 0, queued = 0, protocol = 0, disconnects = 0, lost = 0, budget = 0;
        long reconnects = 0, gaveUp = 0, idle = 0;
        foreach (EngineShard shard in _shards)
        {
            ref ShardCounters c = ref shard.Counters;
            connected += Volatile.Read(ref c.Connected);
            failed += Volatile.Read(ref c.ConnectFailed);
            timedOut += Volatile.Read(ref c.ConnectTimedOut);
            packets += Volatile.Read(ref c.PacketsReceived);
            bytesIn += Volatile.Read(ref c.BytesReceived);
            frames += Volatile.Read(ref c.FramesSent);
            bytesOut += Volatile.Read(ref c.BytesSent);
            queued += Volatile.Read(ref c.FramesQueued);
            protocol += Volatile.Read(ref c.ProtocolErrors);
            disconnects += Volatile.Read(ref c.Disconnects);
            lost += Volatile.Read(ref c.LostPartialBytes);
            budget += Volatile.Read(ref c.ReceiveBudgetExceeded);
            reconnects += Volatile.Read(ref c.Reconnects);
            gaveUp += Volatile.Read(ref c.ReconnectsGaveUp);
            idle += Volatile.Read(ref c.IdleTimeouts);
        }

        return new EngineCounters(connected, failed, timedOut, packets, bytesIn, frames, bytesOut, queued, protocol, disconnects, lost, budget)
        {
            Reconnects = reconnects,
            ReconnectsGaveUp = gaveUp,
            IdleTimeouts = idle,
        };
    }

    /// <summary>errno → count of failed connect attempts (and other native errors the shards met).</summary>
    public IReadOnlyDictionary<int, long> ErrorsByErrno()
    {
        lock (_errors)
        {
            return new Dictionary<int, long>(_errors);
        }
    }

    /// <summary>
    /// Stops every shard (each finishes its current pass, closes its socket and calls the handler's
    /// OnDisconnected for connections still up), waits up to <paramref name="timeout"/> for the
    /// threads, and returns whether they all exited in time.
    /// </summary>
    public bool Stop(TimeSpan timeout)
    {
        RequestStop();

        bool all = true;
        var deadline = DateTime.UtcNow + timeout;
        foreach (EngineShard shard in _shards)
        {
            TimeSpan left = deadline - DateTime.UtcNow;
            all &= shard.Join(left > TimeSpan.Zero ? left : TimeSpan.Zero);
        }

        return all;
    }

    /// <summary>
    /// Stops the shards, waiting up to <see cref="DisposeTimeout"/> for their threads, and disposes
    /// the context if the engine created it. Idempotent; safe from any thread, also after the
    /// context was terminated under the engine. A shard still busy in a handler callback when the
    /// wait ends finishes on its own and the context is terminated once it has.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _ = Stop(DisposeTimeout);
        FinishDispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>
    /// Stops every shard like <see cref="Stop"/> and completes when <see cref="Stopped"/> does,
    /// without blocking a thread. Cancelling <paramref name="cancellationToken"/> ends only the
    /// wait (an <see cref="OperationCanceledException"/>): the shards still stop. Completes at once
    /// for an engine that was never started.
    /// </summary>
    public Task StopAsync(CancellationToken cancellationToken = default)
    {
        RequestStop();
        return Volatile.Read(ref _started) == 0 ? Task.CompletedTask : _stopped.Task.WaitAsync(cancellationToken);
    }

    /// <summary>
    /// Stops the engine gracefully within <paramref name="timeout"/>: intake stops at once
    /// (<see cref="TrySend"/> and <see cref="SendAsync"/> return false, counted in
    /// <see cref="SendQueueCounters.RefusedDraining"/>; a server unbinds and takes no new
    /// connection; a client starts no connect or reconnect), every frame already accepted is
    /// handed to the native socket, which flushes it to its connection before closing it (the
    /// socket's LINGER becomes the time left), and then every shard stops as with
    /// <see cref="StopAsync"/> (connections end with <see cref="ConnectionEndReason.EngineStopped"/>,
    /// a channel's reader completes after the last event). Frames still held when the deadline
    /// passes (or <paramref name="cancellationToken"/> fires) are counted as dropped
    /// (<see cref="SendQueueCounters.DroppedDrainDeadline"/>), and frames for connections that
    /// ended meanwhile as <see cref="SendQueueCounters.DroppedClosed"/>. Completes by the deadline
    /// whatever happens (a shard stuck in a handler callback finishes on its own); completes at
    /// once for an engine that has stopped, and for one that was never started (which then never
    /// starts). Single-flight: a call while a drain runs joins it, waiting until its own deadline
    /// (false if the drain has not finished by then) without shortening the drain's. Frames the
    /// native socket may not have written when it closed are counted as dropped, not sent. See
    /// docs/engine.md, "Draining".
    /// </summary>
    /// <param name="timeout">The deadline, from now; <see cref="Timeout.InfiniteTimeSpan"/> for none (then each connection closes once its output is out and its peer ended, or the peer is gone, without blocking a shard).</param>
    /// <param name="cancellationToken">Makes the deadline now when it fires (no exception: the drain ends as at its deadline).</param>
    /// <returns>
    /// True when every shard had flushed what it held, its native socket wrote everything before
    /// closing, and it stopped before the deadline; false when
    /// the deadline came first (frames may have been dropped, counted) or the engine had stopped
    /// some other way.
    /// </returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (and not infinite).</exception>
    public Task<bool> DrainAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        if (timeout < TimeSpan.Zero && timeout != Timeout.InfiniteTimeSpan)
        {
            return Task.FromException<bool>(new ArgumentOutOfRangeException(nameof(timeout), timeout, "DrainAsync needs a timeout of zero or more, or Timeout.InfiniteTimeSpan."));
        }

        // Intake stops before anything else (no lock, no async state machine to set up first): a
        // post that begins once this call began is refused and counted RefusedDraining.
        foreach (EngineShard shard in _shards)
        {
            shard.RefusePostsForDrain();
        }

        return DrainCoreAsync(timeout, cancellationToken);
    }

    /// <summary><see cref="DrainAsync"/> after intake stopped: starts the drain or joins the one under way.</summary>
    private async Task<bool> DrainCoreAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        Task<bool>? running;
        lock (_drainGate)
        {
            running = _drain;
            if (running is null)
            {
                // Never started: nothing was accepted, so nothing can be lost, and the engine
                // now never starts (StartShards refuses).
                _drain = Volatile.Read(ref _started) == 0 ? Task.FromResult(true) : RunDrainAsync(timeout, cancellationToken);
                running = null;
            }
        }

        if (running is null)
        {
            return await _drain!.ConfigureAwait(false);
        }

        // A drain is under way: join it, never shortening its flush; this call's own deadline
        // (and token) only end its wait.
        try
        {
            return await running.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>The drain itself, begun by the first <see cref="DrainAsync"/> call, with its deadline and token.</summary>
    private async Task<bool> RunDrainAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        // Runs to its first await under _drainGate: it only marks the shards and registers the token.
        if (_stopped.Task.IsCompleted)
        {
            return false;
        }

        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        long deadline = timeout == Timeout.InfiniteTimeSpan
            ? long.MaxValue
            : start + (long)Math.Min(long.MaxValue / 4, timeout.TotalSeconds * System.Diagnostics.Stopwatch.Frequency);
        if (Logger.IsEnabled(LogLevel.Information))
        {
            EngineLog.Draining(Logger, Name, timeout == Timeout.InfiniteTimeSpan ? -1 : timeout.TotalMilliseconds);
        }

        foreach (EngineShard shard in _shards)
        {
            shard.BeginDrain(deadline);
        }

        using CancellationTokenRegistration registration = cancellationToken.Register(
            static state =>
            {
                foreach (EngineShard shard in (EngineShard[])state!)
                {
                    shard.DrainDeadlineNow();
                }
            },
            _shards);
        try
        {
            TimeSpan left = timeout == Timeout.InfiniteTimeSpan ? Timeout.InfiniteTimeSpan : timeout - System.Diagnostics.Stopwatch.GetElapsedTime(start);
            await _stopped.Task.WaitAsync(left < TimeSpan.Zero && left != Timeout.InfiniteTimeSpan ? TimeSpan.Zero : left, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or OperationCanceledException)
        {
            // The deadline passed (by this clock, perhaps a moment before a shard's): it is now for
            // every shard, which stops at its next pass and counts what it held as dropped for it.
            foreach (EngineShard shard in _shards)
            {
                shard.DrainDeadlineNow();
            }

            return false;
        }

        return _shards.All(s => s.DrainedInTime);
    }

    /// <summary>
    /// Like <see cref="Dispose"/>, but waits for the shards (up to <see cref="DisposeTimeout"/>)
    /// asynchronously, so no thread is blocked. Idempotent, and either of the two may follow the other.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        RequestStop();
        if (Volatile.Read(ref _started) != 0)
        {
            // The last shard completes Stopped just before its thread returns; a shard stuck in a
            // handler callback past the timeout finishes on its own, as with Dispose.
            try
            {
                await _stopped.Task.WaitAsync(DisposeTimeout).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }

        FinishDispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>
    /// Starts the engine with an <see cref="EngineChannel"/> as the handler of every shard: the
    /// application reads connection events and packets from <see cref="EngineChannel.Reader"/>
    /// and writes with <see cref="EngineChannel.TrySend"/> or <see cref="EngineChannel.SendAsync"/>.
    /// The reader completes once the engine has stopped (see docs/engine.md, "The channel API").
    /// </summary>
    /// <param name="options">Receive capacity and pipes; null for the defaults.</param>
    /// <exception cref="InvalidOperationException">The engine was already started.</exception>
    /// <exception cref="ObjectDisposedException">The engine was disposed.</exception>
    public EngineChannel StartChannel(EngineChannelOptions? options = null)
    {
        var channel = new EngineChannel(this, options ?? new EngineChannelOptions());
        StartWithHandlers(channel.CreateShardHandler);
        channel.OnEngineStarted();
        return channel;
    }

    /// <summary>The kind's Start: binds or begins connecting, with one handler per shard from <paramref name="handlerFactory"/>.</summary>
    private protected abstract void StartWithHandlers(Func<EngineShard, IConnectionHandler> handlerFactory);

    private void RequestStop()
    {
        foreach (EngineShard shard in _shards)
        {
            shard.RequestStop();
        }
    }

    private void FinishDispose()
    {
        foreach (EngineShard shard in _shards)
        {
            shard.ReleaseUnstarted();
        }

        EngineMetrics.Unregister(this);
        if (_ownsContext)
        {
            // Never waits on a shard that is still running: it holds a reference on the handle,
            // and the context's shutdown makes it leave at its next native call.
            _context.Dispose();
        }

        if (Volatile.Read(ref _started) == 0)
        {
            _stopped.TrySetResult();
        }
    }

    /// <summary>How long <see cref="Dispose"/> waits for the shard threads (10 s).</summary>
    public static TimeSpan DisposeTimeout { get; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Marks the engine started (once), takes a reference on the context, makes each shard's socket
    /// with <paramref name="openSocket"/> and handler, and starts the shard threads; on failure
    /// closes what it opened and rethrows.
    /// </summary>
    private protected void StartShards(
        string caller,
        Func<EngineShard, IConnectionHandler> handlerFactory,
        Action<nint> beforeSockets,
        Func<int, SocketHandle> openSocket,
        Func<nint, ConnectErrnoMonitor?> openMonitor)
    {
        ArgumentNullException.ThrowIfNull(handlerFactory);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_drainGate)
        {
            if (_drain is not null)
            {
                throw new InvalidOperationException($"{caller}: DrainAsync was already called on this engine; a drained engine does not start.");
            }

            if (Interlocked.Exchange(ref _started, 1) != 0)
            {
                throw new InvalidOperationException($"{caller} or StartChannel was already called on this engine; an engine starts once.");
            }
        }

        _shardsRunning = _shards.Length;
        var sockets = new SocketHandle?[_shards.Length];
        var monitors = new ConnectErrnoMonitor?[_shards.Length];
        var handlers = new IConnectionHandler[_shards.Length];
        try
        {
            _contextReference = _context.AddReference(caller);
            beforeSockets(_contextReference.DangerousGetHandle());
            for (int i = 0; i < _shards.Length; i++)
            {
                sockets[i] = openSocket(i);
                monitors[i] = openMonitor(sockets[i]!.DangerousGetHandle());
                handlers[i] = handlerFactory(_shards[i]) ?? throw new InvalidOperationException($"The handler factory returned null for shard {i}.");
            }
        }
        catch
        {
            for (int i = 0; i < _shards.Length; i++)
            {
                monitors[i]?.Dispose();
                sockets[i]?.Dispose();
            }

            ReleaseContextReference();
            Volatile.Write(ref _shardsRunning, 0);
            _stopped.TrySetResult();
            throw;
        }

        EngineMetrics.Register(this);
        for (int i = 0; i < _shards.Length; i++)
        {
            _shards[i].Start(handlers[i], sockets[i]!, monitors[i]);
        }

        if (Logger.IsEnabled(LogLevel.Information))
        {
            string endpoints = string.Join(", ", _options.Endpoints);
            EngineLog.Started(Logger, Name, GetType().Name, _shards.Length, endpoints);
        }
    }

    /// <summary>Called when the engine stops with a fault (a ClientEngine faults its ConnectsResolved with it).</summary>
    private protected virtual void OnFault(Exception fault)
    {
    }

    /// <summary>Called once every shard has exited.</summary>
    private protected virtual void OnAllShardsExited()
    {
    }

    /// <summary>
    /// A shard failed (a handler threw, or a native call failed): that is the engine's fault, and
    /// every shard stops, so no part of the engine runs on at reduced capacity.
    /// </summary>
    internal void ReportFault(EngineShard shard, Exception fault)
    {
        if (Interlocked.CompareExchange(ref _fault, new InvalidOperationException($"Engine shard {shard.Index} failed: {fault.Message}", fault), null) is null)
        {
            LogFault(shard.Index, fault);
        }

        _faultStopped = true;
        _anyShardStopping = true;
        OnFault(_fault!);
        foreach (EngineShard other in _shards)
        {
            other.RequestStop();
        }
    }

    /// <summary>The first fault: a native failure (a ZlinkException) or, anything else, what a handler threw.</summary>
    private void LogFault(int shard, Exception fault)
    {
        if (fault is ZlinkException)
        {
            EngineLog.Faulted(Logger, fault, Name, shard, fault.Message);
        }
        else
        {
            EngineLog.HandlerThrew(Logger, fault, Name, shard, fault.GetType().Name);
        }
    }

    internal void CountError(int errno)
    {
        lock (_errors)
        {
            _errors[errno] = _errors.GetValueOrDefault(errno) + 1;
        }
    }

    /// <summary>Closes a shard's STREAM socket (once its owner is done with it) and stops counting it.</summary>
    internal static void CloseShardSocket(nint socket)
    {
        _ = Native.Close(socket);
        HandleTracker.Closed(NativeHandleKind.Socket);
    }

    /// <summary>The shard's last call, after it closed its socket and monitor.</summary>
    internal void OnShardExited(EngineShard shard, Exception? fault, bool contextTerminated)
    {
        _anyShardStopping = true;
        if (contextTerminated && Interlocked.CompareExchange(ref _fault, ContextTerminatedFault(shard.Index), null) is null)
        {
            EngineLog.ContextTerminated(Logger, Name);
        }
        else if (fault is not null)
        {
            ReportFault(shard, fault);
        }

        if (_fault is not null)
        {
            OnFault(_fault);
        }

        if (Interlocked.Decrement(ref _shardsRunning) == 0)
        {
            // Every shard has closed what it opened on the context: a context disposed meanwhile
            // is terminated here, on this thread, before Stopped completes.
            ReleaseContextReference();
            EngineCounters counters = ReadCounters();
            EngineLog.Stopped(Logger, Name, counters.Connected, counters.ConnectFailed + counters.ConnectTimedOut, counters.Disconnects, DroppedSends);
            OnAllShardsExited();
            _stopped.TrySetResult();
        }
    }

    private ContextTerminatedException ContextTerminatedFault(int shard)
        => (ContextTerminatedException)Ensure.Create(
            ZlinkConstants.ETERM,
            ErrorScope.General,
            $"{GetType().Name} shard {shard}",
            target: null,
            hint: "the engine's context was disposed or shut down while the engine ran; every shard stopped and ended its connections with ContextTerminated");

    private void ReleaseContextReference()
    {
        if (Interlocked.Exchange(ref _contextReference, null) is { } reference)
        {
            reference.DangerousRelease();
        }
    }

    /// <summary>
    /// A shard's STREAM socket with the shared options (LINGER 0, high-water marks, buffers) and the
    /// kind's own, owned by a <see cref="SocketHandle"/> like every socket of the binding (it holds
    /// its own reference on the context; disposing it closes the socket once).
    /// </summary>
    private protected SocketHandle CreateShardSocket(int shard)
    {
        ContextHandle context = _contextReference!;
        bool added = false;
        context.DangerousAddRef(ref added);
        nint raw = Native.Socket(context.DangerousGetHandle(), ZlinkConstants.ZLINK_STREAM);
        if (raw == 0)
        {
            int errno = Native.Errno();
            context.DangerousRelease();
            EngineErrors.Throw($"zlink_socket(STREAM) for shard {shard}", errno);
        }

        var owner = new SocketHandle(raw, context, ZlinkSocketType.Stream);
        nint socket = raw;
        try
        {
            ConfigureFraming(socket, _shards[shard]);
            SetInt(socket, ZlinkConstants.ZLINK_LINGER, 0, "LINGER");
            SetInt(socket, ZlinkConstants.ZLINK_SNDHWM, _options.HighWaterMark, "SNDHWM");
            SetInt(socket, ZlinkConstants.ZLINK_RCVHWM, _options.HighWaterMark, "RCVHWM");
            if (_options.SendBufferSize > 0)
            {
                SetInt(socket, ZlinkConstants.ZLINK_SNDBUF, _options.SendBufferSize, "SNDBUF");
            }

            if (_options.ReceiveBufferSize > 0)
            {
                SetInt(socket, ZlinkConstants.ZLINK_RCVBUF, _options.ReceiveBufferSize, "RCVBUF");
            }

            if (_options.Tls is { } tls)
            {
                SetTls(socket, tls);
            }

            if (_options.TcpKeepalive is bool keepalive)
            {
                // The native STREAM socket sets these on every connection's TCP socket (tcp, tls, ws, wss).
                SetInt(socket, (int)SocketOption.TcpKeepalive, keepalive ? 1 : 0, "TCP_KEEPALIVE");
                SetInt(socket, (int)SocketOption.TcpKeepaliveIdle, _options.TcpKeepaliveIdle > 0 ? _options.TcpKeepaliveIdle : -1, "TCP_KEEPALIVE_IDLE");
                SetInt(socket, (int)SocketOption.TcpKeepaliveInterval, _options.TcpKeepaliveInterval > 0 ? _options.TcpKeepaliveInterval : -1, "TCP_KEEPALIVE_INTVL");
                SetInt(socket, (int)SocketOption.TcpKeepaliveCount, _options.TcpKeepaliveCount > 0 ? _options.TcpKeepaliveCount : -1, "TCP_KEEPALIVE_CNT");
            }

            ConfigureShardSocket(socket, shard);
            return owner;
        }
        catch
        {
            owner.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Sets the native framing of a shard's new socket (before any bind or connect) and tells the
    /// shard: BATCH for the default framer, with MAXMSGSIZE at its largest body, or LENGTH where the
    /// library has no BATCH (a zlink 1.3 build); RAW for every other framer, which a library without
    /// it cannot serve.
    /// </summary>
    /// <exception cref="ZlinkNotSupportedException">The framer needs RAW and the library has none.</exception>
    private unsafe void ConfigureFraming(nint socket, EngineShard shard)
    {
        int probe = 0;
        nuint size = sizeof(int);
        bool eventOption = Native.GetOption(socket, ZlinkConstants.ZLINK_STREAM_EVENT, &probe, &size) == 0;
        if (_options.Framer is LengthPrefixFramer)
        {
            NativeFraming framing = NativeFraming.Length;
            if (_options.ForceLengthFraming)
            {
                eventOption = false;
            }
            else if (TrySetFraming(socket, ZlinkConstants.ZLINK_STREAM_FRAMING_BATCH))
            {
                framing = NativeFraming.Batch;
            }

            // At least 1: the library reads 0 (like -1) as its default limit of 8 MiB.
            long largest = Math.Max(1, EngineShard.LargestBody(_options));
            if (Native.SetOption(socket, ZlinkConstants.ZLINK_MAXMSGSIZE, &largest, sizeof(long)) != 0)
            {
                ThrowSetFailed(ZlinkConstants.ZLINK_MAXMSGSIZE, $"MAXMSGSIZE={largest}");
            }

            if (framing == NativeFraming.Length)
            {
                _lengthFallback = true;
            }

            // The library holds the incomplete packets here: the shard's budget is its budget. A
            // zlink 1.3 library has no such option (EINVAL) and no shard-wide limit.
            long budget = _options.ReceiveBudgetPerShard;
            _ = Native.SetOption(socket, ZlinkConstants.ZLINK_STREAM_RCVBUDGET, &budget, sizeof(long));
            shard.UseFraming(framing, eventOption);
            return;
        }

        if (!TrySetFraming(socket, ZlinkConstants.ZLINK_STREAM_FRAMING_RAW))
        {
            throw NoRawFraming(_options.Framer);
        }

        shard.UseFraming(NativeFraming.Raw, eventOption);
    }

    /// <summary>Sets ZLINK_STREAM_FRAMING; false when the library refuses it (EINVAL: it has no such framing).</summary>
    private static unsafe bool TrySetFraming(nint socket, int framing)
    {
        if (Native.SetOption(socket, ZlinkConstants.ZLINK_STREAM_FRAMING, &framing, sizeof(int)) == 0)
        {
            return true;
        }

        int errno = Native.Errno();
        if (errno != ZlinkConstants.EINVAL)
        {
            EngineErrors.Throw($"zlink_setsockopt(STREAM_FRAMING={framing}) on an engine STREAM socket", errno);
        }

        return false;
    }

    /// <summary>The exception for a framer that needs RAW framing on a library without it.</summary>
    internal static ZlinkNotSupportedException NoRawFraming(IPacketFramer framer)
    {
        const string operation = "zlink_setsockopt(STREAM_FRAMING=RAW) on an engine STREAM socket";
        string message =
            $"The native library {ZlinkLibrary.LoadedFrom} has no RAW STREAM framing (ZLINK_STREAM_FRAMING is EINVAL), and the engine's framer " +
            $"{framer.GetType().FullName} needs each connection's bytes as they arrive. A zlink 1.3 build hands STREAM payloads over only as " +
            $"whole [u32 big-endian length][body] messages: use the default framer (LengthPrefixFramer), or load NetZlink's own libzlink.so " +
            $"(set {ZlinkLibrary.PathVariable} to its path, or unset it).";
        return new ZlinkNotSupportedException(ZlinkConstants.ENOTSUP, operation, message, innerException: null);
    }

    /// <summary>What the kind of engine sets on a shard's socket besides the shared options (connect options; a bind).</summary>
    private protected abstract void ConfigureShardSocket(nint socket, int shard);

    private protected static unsafe void SetInt(nint socket, int option, int value, string name)
    {
        if (Native.SetOption(socket, option, &value, sizeof(int)) != 0)
        {
            ThrowSetFailed(option, $"{name}={value}");
        }
    }

    private static void SetTls(nint socket, EngineTlsOptions tls)
    {
        SetString(socket, (int)SocketOption.TlsCert, tls.CertificateFile, "TLS_CERT");
        SetString(socket, (int)SocketOption.TlsKey, tls.KeyFile, "TLS_KEY");
        SetString(socket, (int)SocketOption.TlsPassword, tls.KeyPassword, "TLS_PASSWORD");
        SetString(socket, (int)SocketOption.TlsCa, tls.CaFile, "TLS_CA");
        SetString(socket, (int)SocketOption.TlsHostname, tls.Hostname, "TLS_HOSTNAME");
        SetInt(socket, (int)SocketOption.TlsVerify, tls.Verify ? 1 : 0, "TLS_VERIFY");
        SetInt(socket, (int)SocketOption.TlsTrustSystem, tls.TrustSystem ? 1 : 0, "TLS_TRUST_SYSTEM");
        SetInt(socket, (int)SocketOption.TlsRequireClientCert, tls.RequireClientCertificate ? 1 : 0, "TLS_REQUIRE_CLIENT_CERT");
    }

    private static unsafe void SetString(nint socket, int option, string? value, string name)
    {
        if (value is null)
        {
            return;
        }

        byte[] bytes = System.Text.Encoding.UTF8.GetBytes(value);
        fixed (byte* p = bytes)
        {
            if (Native.SetOption(socket, option, p, (nuint)bytes.Length) != 0)
            {
                ThrowSetFailed(option, name);
            }
        }
    }

    private static void ThrowSetFailed(int option, string what)
    {
        int errno = Native.Errno();
        ZlinkSocket.ThrowIfNoTls((SocketOption)option, "EngineOptions.Tls");
        EngineErrors.Throw($"zlink_setsockopt({what}) on an engine STREAM socket", errno);
    }
}
