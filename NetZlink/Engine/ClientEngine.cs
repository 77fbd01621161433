// The sharded client engine: a fixed set of shard threads, each owning one STREAM socket and the
// connections assigned to it round-robin (connection i -> shard i % shards, slot i / shards).
// No task, thread or timer per connection: 10,000 connections are 10,000 structs in a few arrays.
//
// Lifetime: from Start until the last shard thread has exited, the engine holds a reference on its
// context's native handle. Each shard closes its own socket and monitor on the way out, whatever
// stopped it (Stop/Dispose, a fault, or ETERM when the context is disposed or shut down under a
// running engine), and the last one gives the reference back; so disposing the context from any
// thread neither waits on the engine nor frees the context under it, and the final termination
// runs once nothing of the engine is left open.
using System.Text;
using NetZlink.Interop;

namespace NetZlink.Engine;

/// <summary>
/// Opens many connections to one or more endpoints and drives them from a fixed number of shard
/// threads. Applications plug in an <see cref="IConnectionHandler"/> per shard (callbacks on the
/// shard thread, no locks) or use <see cref="ChannelConnectionHandler"/> to read packets through a
/// <c>ChannelReader</c>; any thread may send with <see cref="TryPost"/> or <see cref="PostAsync"/>.
/// </summary>
public sealed class ClientEngine : IDisposable
{
    private readonly EngineOptions _options;
    private readonly Context _context;
    private readonly bool _ownsContext;
    private readonly EngineShard[] _shards;
    private readonly byte[][] _endpoints;
    private readonly TaskCompletionSource _connectsResolved = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Dictionary<int, long> _errors = new();
    private ContextHandle? _contextReference;
    private int _shardsUnresolved;
    private int _shardsRunning;
    private Exception? _fault;
    private volatile bool _faultStopped;
    private int _started;
    private int _disposed;

    /// <summary>Creates an engine for <paramref name="connectionCount"/> connections; nothing connects before <see cref="Start"/>.</summary>
    /// <param name="connectionCount">Connections to open (at least 1).</param>
    /// <param name="options">Endpoints and tuning; validated here, and every host name in them resolved once.</param>
    /// <param name="context">The context to create sockets in; null makes (and later disposes) one of its own.</param>
    /// <exception cref="ArgumentException">The options are invalid, or a host name in an endpoint does not
    /// resolve to an IPv4 address: "could not resolve host 'name' in endpoint tcp://name:port: reason".</exception>
    public ClientEngine(int connectionCount, EngineOptions options, Context? context = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(connectionCount, 1);
        options.Validate();
        EndpointHosts.EnsureResolvable(options.Endpoints);
        _options = options;
        ConnectionCount = connectionCount;
        int shards = Math.Min(options.EffectiveShardCount, connectionCount);
        _endpoints = options.Endpoints.Select(e => Encoding.UTF8.GetBytes(e + "\0")).ToArray();

        // Before anything is opened: fail with both numbers when the run cannot fit.
        DescriptorBudget.Ensure(connectionCount, options.ReservedDescriptors + (shards * 4));

        _ownsContext = context is null;
        _context = context ?? new Context();
        _shards = new EngineShard[shards];
        try
        {
            for (int i = 0; i < shards; i++)
            {
                int slots = (connectionCount - i + shards - 1) / shards;
                _shards[i] = new EngineShard(this, options, i, shards, slots);
            }
        }
        catch
        {
            // The shards made so far own an eventfd each.
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

    /// <summary>Connections this engine opens.</summary>
    public int ConnectionCount { get; }

    /// <summary>Number of shard threads.</summary>
    public int ShardCount => _shards.Length;

    /// <summary>
    /// Completes when every connection is established or has finally failed; faults with
    /// <see cref="Fault"/> when a shard stopped first (a <see cref="ContextTerminatedException"/>
    /// when the context was terminated under the engine).
    /// </summary>
    public Task ConnectsResolved => _connectsResolved.Task;

    /// <summary>
    /// Completes when every shard thread has exited and closed its socket: after <see cref="Stop"/>,
    /// <see cref="Dispose"/>, a shard fault, or the termination of the engine's context.
    /// </summary>
    public Task Stopped => _stopped.Task;

    /// <summary>
    /// The first exception a shard died of, if any. When the engine's context is disposed or shut
    /// down while the shards run, every shard stops by itself, its live connections end with
    /// <see cref="ConnectionEndReason.ContextTerminated"/>, and this is a
    /// <see cref="ContextTerminatedException"/>; nothing is thrown on any thread.
    /// </summary>
    public Exception? Fault => Volatile.Read(ref _fault);

    /// <summary>
    /// Frames <see cref="TryPost"/> or <see cref="PostAsync"/> accepted that were dropped instead of
    /// sent (see <see cref="ReadPostCounters"/> for the reasons).
    /// </summary>
    public long DroppedPosts
    {
        get
        {
            PostCounters c = ReadPostCounters();
            return c.DroppedClosed + c.DroppedStopped;
        }
    }

    /// <summary>True from <see cref="Start"/> until the first shard thread stops (stop, fault or context termination).</summary>
    public bool IsRunning => Volatile.Read(ref _started) != 0 && Volatile.Read(ref _disposed) == 0 && !_stopped.Task.IsCompleted && !_anyShardStopping;

    private volatile bool _anyShardStopping;

    /// <summary>
    /// Checks that the native library's STREAM sockets can connect, creates each shard's socket and
    /// handler and starts the shard threads, which begin connecting at once. A failed connect
    /// attempt is retried (<see cref="EngineOptions.ConnectRetries"/>) unless its errno cannot change
    /// on a retry (<see cref="ConnectFailure.Permanent"/>): then the connection fails after that one attempt.
    /// </summary>
    /// <param name="handlerFactory">Called once per shard, on the calling thread, before that shard starts.</param>
    /// <exception cref="ObjectDisposedException">The engine, or the context it was given, was disposed.</exception>
    /// <exception cref="ContextTerminatedException">The context was shut down.</exception>
    /// <exception cref="ZlinkNotSupportedException">The loaded native library cannot connect STREAM sockets
    /// (zlink_connect on one fails with EOPNOTSUPP, as on a zlink 1.3 build, whose STREAM is server-only); the
    /// message names the library file. Checked once per process, before any shard socket is made.</exception>
    public void Start(Func<EngineShard, IConnectionHandler> handlerFactory)
    {
        ArgumentNullException.ThrowIfNull(handlerFactory);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (Interlocked.Exchange(ref _started, 1) != 0)
        {
            throw new InvalidOperationException("ClientEngine.Start was already called; an engine runs once.");
        }

        _shardsUnresolved = _shards.Length;
        _shardsRunning = _shards.Length;
        var sockets = new nint[_shards.Length];
        var monitors = new ConnectErrnoMonitor?[_shards.Length];
        var handlers = new IConnectionHandler[_shards.Length];
        try
        {
            _contextReference = _context.AddReference("ClientEngine.Start");
            StreamConnectProbe.Check(_contextReference.DangerousGetHandle());
            for (int i = 0; i < _shards.Length; i++)
            {
                sockets[i] = CreateShardSocket(i);
                monitors[i] = ConnectErrnoMonitor.TryOpen(sockets[i]);
                handlers[i] = handlerFactory(_shards[i]) ?? throw new InvalidOperationException($"The handler factory returned null for shard {i}.");
            }
        }
        catch
        {
            for (int i = 0; i < _shards.Length; i++)
            {
                monitors[i]?.Dispose();
                if (sockets[i] != 0)
                {
                    CloseShardSocket(sockets[i]);
                }
            }

            ReleaseContextReference();
            Volatile.Write(ref _shardsRunning, 0);
            _stopped.TrySetResult();
            throw;
        }

        EngineMetrics.Register(this);
        for (int i = 0; i < _shards.Length; i++)
        {
            _shards[i].Start(handlers[i], sockets[i], monitors[i]);
        }
    }

    /// <summary>
    /// Sends a frame to a connection from any thread, without blocking: the bytes are copied into a
    /// pooled buffer and queued to the connection's shard, which sends them on its next pass. The
    /// frame holds posting capacity until the native socket takes it: at most
    /// <see cref="EngineOptions.PostCapacityPerConnection"/> bytes per connection and
    /// <see cref="EngineOptions.PostCapacityPerShard"/> per shard. Every accepted frame is later
    /// either sent or counted as dropped (<see cref="ReadPostCounters"/>): dropped when its
    /// connection is not established when its turn comes or ends first, or when the engine stops.
    /// </summary>
    /// <returns>
    /// True when accepted; false when there is no room now (a slow peer: retry later, or use
    /// <see cref="PostAsync"/> to wait) or the engine is not running (<see cref="IsRunning"/>).
    /// An empty frame is accepted and ignored.
    /// </returns>
    /// <exception cref="ArgumentException">The connection is not one of this engine's.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The frame is larger than <see cref="EngineOptions.PostCapacityPerConnection"/>, so it could never be accepted.</exception>
    public bool TryPost(Connection connection, ReadOnlySpan<byte> frame)
        => TryPostCore(connection, frame) == EngineShard.PostStatus.Accepted;

    /// <summary>
    /// Like <see cref="TryPost"/>, but waits (asynchronously, no thread blocked) for posting
    /// capacity when the connection or its shard is full.
    /// </summary>
    /// <returns>True once accepted; false when the engine is not running or stops while waiting (nothing was accepted).</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled first; nothing was accepted.</exception>
    /// <exception cref="ArgumentException">The connection is not one of this engine's.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The frame is larger than <see cref="EngineOptions.PostCapacityPerConnection"/>.</exception>
    public ValueTask<bool> PostAsync(Connection connection, ReadOnlyMemory<byte> frame, CancellationToken cancellationToken = default)
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

    /// <summary>Posting counters summed over shards now (see <see cref="PostCounters"/>).</summary>
    public PostCounters ReadPostCounters()
    {
        long accepted = 0, sent = 0, closed = 0, stopped = 0, held = 0;
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
            held += shard.PostedBytesHeld;
        }

        return new PostCounters(accepted, sent, closed, stopped, held);
    }

    private EngineShard.PostStatus TryPostCore(Connection connection, ReadOnlySpan<byte> frame)
    {
        EngineShard shard = ShardOf(connection);
        if (frame.Length > _options.PostCapacityPerConnection)
        {
            throw new ArgumentOutOfRangeException(
                nameof(frame),
                frame.Length,
                $"A frame of {frame.Length} bytes can never be posted: EngineOptions.PostCapacityPerConnection is {_options.PostCapacityPerConnection}.");
        }

        if (Volatile.Read(ref _started) == 0 || Volatile.Read(ref _disposed) != 0)
        {
            return EngineShard.PostStatus.Closed;
        }

        return frame.IsEmpty ? EngineShard.PostStatus.Accepted : shard.TryPost(connection.Slot, frame);
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
            || connection.Index != (connection.Slot * _shards.Length) + connection.Shard)
        {
            throw new ArgumentException(
                $"{connection} is not a connection of this engine ({ConnectionCount} connections over {_shards.Length} shards): use the Connection a handler was given.",
                nameof(connection));
        }

        return _shards[connection.Shard];
    }

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
        long connected = 0, failed = 0, timedOut = 0, packets = 0, bytesIn = 0, frames = 0, bytesOut = 0, queued = 0, protocol = 0, disconnects = 0, lost = 0;
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
        }

        return new EngineCounters(connected, failed, timedOut, packets, bytesIn, frames, bytesOut, queued, protocol, disconnects, lost);
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
        foreach (EngineShard shard in _shards)
        {
            shard.RequestStop();
        }

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

    internal byte[] EndpointUtf8(int connectionIndex) => _endpoints[connectionIndex % _endpoints.Length];

    /// <summary>True once a handler exception or a shard failure stopped the engine.</summary>
    internal bool FaultStopped => _faultStopped;

    /// <summary>
    /// A shard failed (a handler threw, or a native call failed): that is the engine's fault, and
    /// every shard stops, so no part of the engine runs on at reduced capacity.
    /// </summary>
    internal void ReportFault(EngineShard shard, Exception fault)
    {
        Interlocked.CompareExchange(ref _fault, new InvalidOperationException($"Engine shard {shard.Index} failed: {fault.Message}", fault), null);
        _faultStopped = true;
        _anyShardStopping = true;
        _connectsResolved.TrySetException(_fault!);
        foreach (EngineShard other in _shards)
        {
            other.RequestStop();
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
        _ = NativeMethods.zlink_close(socket);
        HandleTracker.Closed(NativeHandleKind.Socket);
    }

    internal void OnShardConnectsResolved()
    {
        if (Interlocked.Decrement(ref _shardsUnresolved) == 0)
        {
            _connectsResolved.TrySetResult();
        }
    }

    /// <summary>The shard's last call, after it closed its socket and monitor.</summary>
    internal void OnShardExited(EngineShard shard, Exception? fault, bool contextTerminated)
    {
        _anyShardStopping = true;
        if (contextTerminated)
        {
            Interlocked.CompareExchange(ref _fault, ContextTerminatedFault(shard.Index), null);
        }
        else if (fault is not null)
        {
            ReportFault(shard, fault);
        }

        if (_fault is not null)
        {
            _connectsResolved.TrySetException(_fault);
        }

        if (Interlocked.Decrement(ref _shardsRunning) == 0)
        {
            // Every shard has closed what it opened on the context: a context disposed meanwhile
            // is terminated here, on this thread, before Stopped completes.
            ReleaseContextReference();
            _connectsResolved.TrySetResult();
            _stopped.TrySetResult();
        }
    }

    private static ContextTerminatedException ContextTerminatedFault(int shard)
        => (ContextTerminatedException)Ensure.Create(
            ZlinkConstants.ETERM,
            ErrorScope.General,
            $"ClientEngine shard {shard}",
            target: null,
            hint: "the engine's context was disposed or shut down while the engine ran; every shard stopped and ended its connections with ContextTerminated");

    private void ReleaseContextReference()
    {
        if (Interlocked.Exchange(ref _contextReference, null) is { } reference)
        {
            reference.DangerousRelease();
        }
    }

    private nint CreateShardSocket(int shard)
    {
        nint socket = NativeMethods.zlink_socket(_contextReference!.DangerousGetHandle(), ZlinkConstants.ZLINK_STREAM);
        if (socket == 0)
        {
            EngineErrors.Throw($"zlink_socket(STREAM) for shard {shard}", NativeMethods.zlink_errno());
        }

        HandleTracker.Opened(NativeHandleKind.Socket);

        try
        {
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

            // The engine times out and retries attempts itself; the socket must not retry behind its back.
            SetInt(socket, ZlinkConstants.ZLINK_RECONNECT_IVL, -1, "RECONNECT_IVL");
            SetInt(socket, ZlinkConstants.ZLINK_CONNECT_TIMEOUT, (int)Math.Min(int.MaxValue, _options.ConnectTimeout.TotalMilliseconds), "CONNECT_TIMEOUT");
            return socket;
        }
        catch
        {
            CloseShardSocket(socket);
            throw;
        }
    }

    private static unsafe void SetInt(nint socket, int option, int value, string name)
    {
        if (NativeMethods.zlink_setsockopt(socket, option, &value, sizeof(int)) != 0)
        {
            EngineErrors.Throw($"zlink_setsockopt({name}={value}) on an engine STREAM socket", NativeMethods.zlink_errno());
        }
    }
}
