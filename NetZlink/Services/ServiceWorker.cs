using System.Collections.Concurrent;
using System.Diagnostics;

namespace NetZlink.Services;

/// <summary>
/// The thread behind each service object, as zlink runs one per registry, discovery, receiver and
/// gateway. It owns the sockets only it uses (the binding's rule: one thread per socket at a time),
/// sleeps in one <see cref="ZlinkPoller"/> over them, a wake-up socket and any descriptor a
/// subclass adds, runs commands other threads post, and calls <see cref="OnTick"/> at least every
/// <see cref="TickMilliseconds"/>.
/// </summary>
internal abstract class ServiceWorker : IDisposable
{
    private static long s_wakeCounter;
    private readonly ConcurrentQueue<Action> _commands = new();
    private readonly Lock _wakeGate = new();
    private readonly ZlinkSocket _wakeTx;
    private readonly ZlinkSocket _wakeRx;
    private readonly string _name;
    private Thread? _thread;
    private volatile bool _stopping;
    private long _refused;
    private string? _lastRefusal;
    private ZlinkPoller? _poller;
    private bool _pollerDirty = true;
    private int _disposed;

    protected ServiceWorker(ZlinkContext context, string name)
    {
        ArgumentNullException.ThrowIfNull(context);
        Context = context;
        _name = name;
        string endpoint = $"inproc://netzlink-service-wake-{Environment.ProcessId}-{Interlocked.Increment(ref s_wakeCounter)}";
        _wakeRx = context.CreateSocket(ZlinkSocketType.Pair);
        _wakeTx = context.CreateSocket(ZlinkSocketType.Pair);
        _wakeRx.Bind(endpoint);
        _wakeTx.Connect(endpoint);
    }

    protected ZlinkContext Context { get; }

    /// <summary>Control messages refused as not following the protocol.</summary>
    public long RefusedMessages => Interlocked.Read(ref _refused);

    /// <summary>Why the last refused message was refused.</summary>
    public string? LastRefusal => Volatile.Read(ref _lastRefusal);

    /// <summary>Set when the worker thread failed: every later call sees it.</summary>
    public Exception? Fault { get; private set; }

    protected bool IsStopping => _stopping;

    /// <summary>Whether this turn of the loop ran posted commands (which may have used the worker's
    /// sockets, and so taken a wake-up their descriptors would have given).</summary>
    protected bool CommandsRan { get; private set; }

    protected virtual int TickMilliseconds => 100;

    protected static long NowMs => Stopwatch.GetTimestamp() * 1000 / Stopwatch.Frequency;

    protected void StartThread()
    {
        _thread = new Thread(Run) { IsBackground = true, Name = _name };
        _thread.Start();
    }

    protected void Refuse(string reason)
    {
        Interlocked.Increment(ref _refused);
        Volatile.Write(ref _lastRefusal, reason);
    }

    /// <summary>Decodes a control message; a malformed one is refused (counted, its reason kept) and false returned.</summary>
    protected bool TryDecode<T>(Func<IReadOnlyList<byte[]>, T> decode, IReadOnlyList<byte[]> frames, out T message)
    {
        try
        {
            message = decode(frames);
            return true;
        }
        catch (ServiceProtocolException e)
        {
            Refuse(e.Message);
            message = default!;
            return false;
        }
    }

    /// <summary>Marks the poll set as changed: <see cref="AddPollItems"/> runs again before the next poll.</summary>
    protected void PollSetChanged() => _pollerDirty = true;

    /// <summary>As <see cref="PollSetChanged"/>, from any thread: the worker wakes to rebuild its
    /// poll set (nothing when it stopped).</summary>
    protected void PollSetChangedSoon()
    {
        try
        {
            Post(PollSetChanged);
        }
        catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException)
        {
            // Stopped (or failed): it polls nothing any more.
        }
    }

    /// <summary>Adds the sockets and descriptors to poll besides the wake-up socket (index 0).</summary>
    protected abstract void AddPollItems(ZlinkPoller poller);

    /// <summary>Handles what the last poll found (the wake-up socket is index 0 and already drained).</summary>
    protected abstract void OnPolled(ZlinkPoller poller);

    /// <summary>Timers: runs after every poll.</summary>
    protected abstract void OnTick(long nowMs);

    /// <summary>Closes the worker's own sockets, on the worker thread, as it exits.</summary>
    protected abstract void OnStopped();

    /// <summary>Runs <paramref name="command"/> on the worker thread.</summary>
    protected void Post(Action command)
    {
        ThrowIfFaulted();
        _commands.Enqueue(command);
        Wake();
    }

    /// <summary>Runs <paramref name="command"/> on the worker thread and completes with its result.</summary>
    protected Task<T> InvokeAsync<T>(Func<T> command)
    {
        var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        Post(() =>
        {
            try
            {
                done.TrySetResult(command());
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                done.TrySetException(e);
            }
        });
        return done.Task;
    }

    protected void ThrowIfFaulted()
    {
        // Named after the public type the worker serves (ZlinkGateway, not ZlinkGateway+Worker).
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, GetType().DeclaringType ?? GetType());
        if (Fault is { } fault)
        {
            throw new InvalidOperationException($"{_name} stopped after a failure: {fault.Message}", fault);
        }
    }

    private void Wake()
    {
        lock (_wakeGate)
        {
            if (!_wakeTx.IsDisposed)
            {
                // A full pipe already holds a wake-up: nothing is lost by a refused one.
                _wakeTx.TrySend([1]);
            }
        }
    }

    private void Run()
    {
        Span<byte> sink = stackalloc byte[8];
        try
        {
            while (!_stopping)
            {
                if (_pollerDirty)
                {
                    _poller = new ZlinkPoller();
                    _poller.Add(_wakeRx, PollEvents.PollIn);
                    AddPollItems(_poller);
                    _pollerDirty = false;
                }

                int ready = _poller!.Poll(TickMilliseconds);
                if (ready > 0 && (_poller.GetReturnedEvents(0) & PollEvents.PollIn) != 0)
                {
                    while (_wakeRx.TryReceive(sink, out _))
                    {
                    }
                }

                bool ran = false;
                while (_commands.TryDequeue(out Action? command))
                {
                    command();
                    ran = true;
                }

                CommandsRan = ran;
                if (_stopping)
                {
                    break;
                }

                if (ready > 0)
                {
                    OnPolled(_poller);
                }

                OnTick(NowMs);
            }
        }
        catch (ContextTerminatedException) when (_stopping)
        {
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Fault = e;
        }
        finally
        {
            // Commands posted after the stop see ObjectDisposedException from their task.
            while (_commands.TryDequeue(out Action? command))
            {
                try
                {
                    command();
                }
                catch (Exception e) when (e is not OutOfMemoryException)
                {
                    Fault ??= e;
                }
            }

            try
            {
                OnStopped();
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                Fault ??= e;
            }
        }
    }

    /// <summary>Stops the thread (waits for it) and closes every socket.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        StopIntake();
        _stopping = true;
        Wake();
        if (_thread is { } thread && thread != Thread.CurrentThread)
        {
            thread.Join();
        }
        else if (_thread is null)
        {
            OnStopped();
        }

        lock (_wakeGate)
        {
            _wakeTx.Dispose();
        }

        _wakeRx.Dispose();
        DisposeShared();
        GC.SuppressFinalize(this);
    }

    /// <summary>Closes what other threads share (after the thread stopped).</summary>
    protected virtual void DisposeShared()
    {
    }

    public ValueTask DisposeAsync()
    {
        // The thread stops within one poll interval (at most TickMilliseconds): joining it off the
        // caller's thread keeps an async caller from blocking. What readers are given ends here,
        // on the caller's thread, first: a reader that keeps finding messages in a flood would
        // otherwise keep a thread-pool thread busy that the join below may be waiting for.
        if (_thread is null || Volatile.Read(ref _disposed) != 0)
        {
            Dispose();
            return ValueTask.CompletedTask;
        }

        StopIntake();
        return new ValueTask(Task.Run(Dispose));
    }

    private int _intakeStopped;

    /// <summary>Once, at the start of a dispose: <see cref="OnDisposing"/>.</summary>
    private void StopIntake()
    {
        if (Interlocked.Exchange(ref _intakeStopped, 1) == 0)
        {
            OnDisposing();
        }
    }

    /// <summary>At the start of a dispose, on the disposing thread, before the worker stops: ends
    /// what readers are given (their queues complete; what they hold stays readable).</summary>
    protected virtual void OnDisposing()
    {
    }
}
