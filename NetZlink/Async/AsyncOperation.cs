// One direction's reusable async operation of a socket (each socket has one for receiving and one
// for sending): the IValueTaskSource behind the ValueTasks of ZlinkSocket's *Async methods, the
// operation's arguments while it waits, and its outcome. Reused for every operation, so a waiting
// operation allocates nothing.
//
// It is "in use" from the call that starts it until its ValueTask's result is read (GetResult);
// starting another operation of the same direction meanwhile is refused with
// InvalidOperationException. Completion runs the awaiting continuation inline where the outcome
// was found on a thread-pool thread (the reactor's work item), and is queued to the thread pool
// (this object is the work item) when it was found on a thread that must not run user code: a
// cancelling thread, a disposing thread, or the caller of the other direction's operation.
using System.Threading.Tasks.Sources;

namespace NetZlink.Interop;

internal sealed class AsyncOperation(AsyncSocketState owner, bool receives)
    : IValueTaskSource<int>, IValueTaskSource<List<byte[]>>, IValueTaskSource, IThreadPoolWorkItem
{
    private ManualResetValueTaskSourceCore<int> _core;
    private int _inUse;

    /// <summary>The socket state this operation belongs to.</summary>
    internal AsyncSocketState Owner { get; } = owner;

    /// <summary>True for the receive direction.</summary>
    internal bool Receives { get; } = receives;

    /// <summary>What the waiting operation does (set under the owner's lock).</summary>
    internal AsyncKind Kind { get; set; }

    /// <summary>The public method's name, for errors.</summary>
    internal string Name { get; set; } = "";

    /// <summary>True while the operation waits for the socket (under the owner's lock).</summary>
    internal bool IsPending { get; set; }

    // Arguments, cleared when the result is read so the operation keeps no caller memory alive.
    internal Memory<byte> Buffer;
    internal ReadOnlyMemory<byte> Data;
    internal SendFlags Flags;
    internal ZlinkMessage? Message;
    internal List<byte[]>? Parts;
    internal IReadOnlyList<ReadOnlyMemory<byte>>? SendParts;

    /// <summary>The token the waiting operation was started with.</summary>
    internal CancellationToken Token;

    /// <summary>Its registration while it waits (written and taken under the owner's lock).</summary>
    internal CancellationTokenRegistration Registration;

    /// <summary>The registration taken at completion, unregistered (without waiting) when the outcome is signalled.</summary>
    private CancellationTokenRegistration _completedRegistration;

    /// <summary>The operation's error, or null for success.</summary>
    internal Exception? Error;

    /// <summary>The result of a receive into a buffer (the frame's size) or of a message receive.</summary>
    internal int Result;

    /// <summary>The version of the ValueTask handed out.</summary>
    internal short Version => _core.Version;

    /// <summary>Takes the operation for a new call; refuses when the previous one's result was not read yet.</summary>
    internal void Begin(AsyncKind kind, string name)
    {
        if (_inUse != 0)
        {
            throw new InvalidOperationException(
                $"{name}: another {(Receives ? "receive" : "send")} operation is still in progress on this {Owner.Handle.Type.ToString().ToUpperInvariant()} socket "
                + "(its ValueTask was not awaited yet). A socket runs one async receive and one async send at a time; await each before starting the next of the same direction.");
        }

        _inUse = 1;
        Kind = kind;
        Name = name;
        Error = null;
        Result = 0;
    }

    /// <summary>The operation finished inside the starting call: the caller returns a completed ValueTask.</summary>
    internal void EndSynchronously()
    {
        ClearArguments();
        Volatile.Write(ref _inUse, 0);
    }

    /// <summary>
    /// Under the owner's lock: the waiting operation ends with <paramref name="error"/> (null: success).
    /// The caller signals it after the lock with <see cref="Signal"/> or <see cref="Dispatch"/>.
    /// </summary>
    internal void End(Exception? error)
    {
        IsPending = false;
        Error = error;
        _completedRegistration = Registration;
        Registration = default;
    }

    /// <summary>Signals the outcome on this thread: the awaiting continuation runs here.</summary>
    internal void Signal()
    {
        _ = _completedRegistration.Unregister();
        _completedRegistration = default;
        if (Error is null)
        {
            _core.SetResult(Result);
        }
        else
        {
            _core.SetException(Error);
        }
    }

    /// <summary>Signals the outcome from a thread-pool thread.</summary>
    internal void Dispatch() => ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);

    void IThreadPoolWorkItem.Execute() => Signal();

    int IValueTaskSource<int>.GetResult(short token)
    {
        CheckToken(token);
        try
        {
            return _core.GetResult(token);
        }
        finally
        {
            Release();
        }
    }

    List<byte[]> IValueTaskSource<List<byte[]>>.GetResult(short token)
    {
        CheckToken(token);
        List<byte[]>? parts = Parts;
        try
        {
            _core.GetResult(token);
            return parts!;
        }
        finally
        {
            Release();
        }
    }

    void IValueTaskSource.GetResult(short token)
    {
        CheckToken(token);
        try
        {
            _core.GetResult(token);
        }
        finally
        {
            Release();
        }
    }

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => Status(token);

    ValueTaskSourceStatus IValueTaskSource<List<byte[]>>.GetStatus(short token) => Status(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => Status(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        _ = Status(token);
        _core.OnCompleted(continuation, state, token, flags);
    }

    void IValueTaskSource<List<byte[]>>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        _ = Status(token);
        _core.OnCompleted(continuation, state, token, flags);
    }

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        _ = Status(token);
        _core.OnCompleted(continuation, state, token, flags);
    }

    private ValueTaskSourceStatus Status(short token) =>
        token == _core.Version ? _core.GetStatus(token) : throw StaleToken();

    private static InvalidOperationException StaleToken() =>
        new("A ValueTask of a NetZlink async operation was awaited twice, or after its result was read; a ValueTask may be consumed once.");

    private void CheckToken(short token)
    {
        if (token != _core.Version)
        {
            throw StaleToken();
        }

        // Reading the result of an operation still waiting (ValueTask.Result, GetAwaiter().GetResult()
        // before completion) must not recycle it: it keeps waiting, and its buffer and result stay its own.
        if (_core.GetStatus(token) == ValueTaskSourceStatus.Pending)
        {
            throw new InvalidOperationException($"{Name}: the operation has not completed yet; await the ValueTask (its Result may be read only once it completed).");
        }
    }

    private void Release()
    {
        ClearArguments();
        Error = null;
        _core.Reset();
        Volatile.Write(ref _inUse, 0);
    }

    private void ClearArguments()
    {
        Buffer = default;
        Data = default;
        Message = null;
        Parts = null;
        SendParts = null;
        Token = default;
    }
}

/// <summary>What an async operation does.</summary>
internal enum AsyncKind
{
    ReceiveBuffer,
    ReceiveMessage,
    ReceiveMultipart,
    SendBuffer,
    SendMessage,
    SendMultipart,
}
