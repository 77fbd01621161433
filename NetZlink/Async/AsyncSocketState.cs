// A socket's async side: one receive and one send operation (AsyncOperation), a lock that orders
// every native call made for them, and the pump that drives them from ZLINK_FD and ZLINK_EVENTS.
//
// Protocol:
// - A call first tries the operation with DONTWAIT on the caller's thread (through the ordinary
//   SocketLease while no operation waits). Done: a completed ValueTask, nothing else happens.
// - Would block: the operation becomes pending. The first pending operation takes the socket's
//   owner word for async use (SocketHandle.EnterAsync), which revokes any thread bias; from then
//   until no operation waits, every other call on the socket (a sync Receive, an option, a ZlinkPoller)
//   is refused with InvalidOperationException, and the native calls for the pending operations
//   are made under this state's lock, by whichever thread holds it.
// - The pump: try every pending operation (DONTWAIT), then read EVENTS (which processes the
//   socket's commands, so afterwards the descriptor signals any later change); when EVENTS says a
//   waiting direction is ready, try again (at most twice per pass, for STREAM sockets whose
//   POLLOUT is always set). Still pending: arm the descriptor one-shot with the reactor.
// - The reactor queues this state to the thread pool when the descriptor fires; Execute pumps.
// - Completion (success, error, cancellation, disposal) is decided under the lock, exactly once
//   (IsPending goes false); the continuation runs after the lock is released.
// - Dispose of the socket (or of its context) completes waiting operations with
//   ObjectDisposedException and gives the owner word back, which lets the close proceed.
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed unsafe class AsyncSocketState : IThreadPoolWorkItem
{
    // EVENTS said "ready" and the attempt still failed: give up the pass after this many tries
    // and wait for the descriptor instead of spinning.
    private const int ReadyRetries = 2;

    private static readonly Action<object?, CancellationToken> CancelCallback = static (state, token) =>
    {
        var operation = (AsyncOperation)state!;
        operation.Owner.Cancel(operation, token);
    };

    private readonly Lock _gate = new();
    private readonly AsyncOperation _receive;
    private readonly AsyncOperation _send;

    // True while pending operations hold the socket's owner word (under _gate).
    private bool _holding;

    // The socket's ZLINK_FD, read once, the first time an operation waits; -1 until then.
    private int _fd = -1;

    internal AsyncSocketState(SocketHandle handle)
    {
        Handle = handle;
        _receive = new AsyncOperation(this, receives: true);
        _send = new AsyncOperation(this, receives: false);
    }

    internal SocketHandle Handle { get; }

    /// <summary>The reactor the descriptor is registered with, or null (set by SocketReactor).</summary>
    internal SocketReactor? Reactor { get; set; }

    /// <summary>The descriptor's key in its reactor (slot and generation, set by SocketReactor).</summary>
    internal ulong ReactorKey { get; set; }

    internal ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken token)
    {
        AsyncOperation op = _receive;
        lock (_gate)
        {
            op.Begin(AsyncKind.ReceiveBuffer, "ReceiveAsync");
            op.Buffer = buffer;
            Outcome outcome = Start(op, token);
            return outcome switch
            {
                Outcome.Done => new ValueTask<int>(TakeResult(op)),
                Outcome.Failed => ValueTask.FromException<int>(TakeError(op)),
                _ => new ValueTask<int>(op, op.Version),
            };
        }
    }

    internal ValueTask ReceiveAsync(ZlinkMessage message, CancellationToken token)
    {
        AsyncOperation op = _receive;
        lock (_gate)
        {
            op.Begin(AsyncKind.ReceiveMessage, "ReceiveAsync");
            op.Message = message;
            return Finish(op, Start(op, token));
        }
    }

    internal ValueTask<List<byte[]>> ReceiveMultipartAsync(CancellationToken token)
    {
        AsyncOperation op = _receive;
        lock (_gate)
        {
            op.Begin(AsyncKind.ReceiveMultipart, "ReceiveMultipartAsync");
            var parts = new List<byte[]>();
            op.Parts = parts;
            Outcome outcome = Start(op, token);
            return outcome switch
            {
                Outcome.Done => Done(op, parts),
                Outcome.Failed => ValueTask.FromException<List<byte[]>>(TakeError(op)),
                _ => new ValueTask<List<byte[]>>(op, op.Version),
            };
        }

        static ValueTask<List<byte[]>> Done(AsyncOperation op, List<byte[]> parts)
        {
            op.EndSynchronously();
            return new ValueTask<List<byte[]>>(parts);
        }
    }

    internal ValueTask SendAsync(ReadOnlyMemory<byte> data, SendFlags flags, CancellationToken token)
    {
        AsyncOperation op = _send;
        lock (_gate)
        {
            op.Begin(AsyncKind.SendBuffer, "SendAsync");
            op.Data = data;
            op.Flags = flags;
            return Finish(op, Start(op, token));
        }
    }

    internal ValueTask SendAsync(ZlinkMessage message, SendFlags flags, CancellationToken token)
    {
        AsyncOperation op = _send;
        lock (_gate)
        {
            op.Begin(AsyncKind.SendMessage, "SendAsync");
            op.Message = message;
            op.Flags = flags;
            return Finish(op, Start(op, token));
        }
    }

    internal ValueTask SendMultipartAsync(IReadOnlyList<ReadOnlyMemory<byte>> parts, CancellationToken token)
    {
        AsyncOperation op = _send;
        lock (_gate)
        {
            op.Begin(AsyncKind.SendMultipart, "SendMultipartAsync");
            op.SendParts = parts;
            return Finish(op, Start(op, token));
        }
    }

    /// <summary>The reactor saw the descriptor fire: pump on this thread-pool thread.</summary>
    void IThreadPoolWorkItem.Execute()
    {
        AsyncOperation? receiveDone = null;
        AsyncOperation? sendDone = null;
        lock (_gate)
        {
            if (!_receive.IsPending && !_send.IsPending)
            {
                return;
            }

            Pump(ref receiveDone, ref sendDone);
            AfterPump(ref receiveDone, ref sendDone);
        }

        // Continuations run here, on this pool thread, after the lock is released.
        receiveDone?.Signal();
        sendDone?.Signal();
    }

    /// <summary>
    /// The socket is closing (its Dispose or its context's): waiting operations end with
    /// ObjectDisposedException, and the owner word is given back so the close can proceed.
    /// </summary>
    internal void OnClosing()
    {
        AsyncOperation? receiveDone = null;
        AsyncOperation? sendDone = null;
        lock (_gate)
        {
            if (_receive.IsPending)
            {
                Complete(_receive, new ObjectDisposedException(nameof(ZlinkSocket), $"{_receive.Name}: the socket was disposed while the operation waited."), ref receiveDone);
            }

            if (_send.IsPending)
            {
                Complete(_send, new ObjectDisposedException(nameof(ZlinkSocket), $"{_send.Name}: the socket was disposed while the operation waited."), ref sendDone);
            }

            ReleaseIfIdle();
        }

        receiveDone?.Dispatch();
        sendDone?.Dispatch();
    }

    /// <summary>Just before the native close: the descriptor leaves the reactor while it is still open.</summary>
    internal void OnClose()
    {
        if (_fd >= 0)
        {
            SocketReactor.Remove(this, _fd);
        }
    }

    private static int TakeResult(AsyncOperation op)
    {
        int result = op.Result;
        op.EndSynchronously();
        return result;
    }

    private static Exception TakeError(AsyncOperation op)
    {
        Exception error = op.Error!;
        op.EndSynchronously();
        return error;
    }

    private static ValueTask Finish(AsyncOperation op, Outcome outcome) => outcome switch
    {
        Outcome.Done => Completed(op),
        Outcome.Failed => ValueTask.FromException(TakeError(op)),
        _ => new ValueTask(op, op.Version),
    };

    private static ValueTask Completed(AsyncOperation op)
    {
        op.EndSynchronously();
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// Under the lock: the first attempt, and when it would block, the operation waits (owner
    /// word, pump, arm, cancellation). Errors found by the first attempt fail the ValueTask;
    /// misuse (a call overlapping another thread's) is thrown.
    /// </summary>
    private Outcome Start(AsyncOperation op, CancellationToken token)
    {
        if (token.IsCancellationRequested)
        {
            op.Error = new OperationCanceledException(token);
            return Outcome.Failed;
        }

        try
        {
            if (_holding ? Attempt(op, Handle.DangerousGetHandle()) : AttemptLeased(op))
            {
                if (_holding)
                {
                    // The other direction's operation waits: this call may have processed the
                    // socket's commands and so taken the descriptor's signal meant for it (a
                    // message that arrived meanwhile). Try it and read EVENTS again before
                    // returning, as after every call, or it could wait for a signal already spent.
                    PumpOther();
                }

                return Outcome.Done;
            }

            if (!_holding)
            {
                Handle.EnterAsync(op.Name);
                _holding = true;
            }
        }
        catch (Exception error)
        {
            if (error is InvalidOperationException and not ObjectDisposedException)
            {
                // Misuse (another thread inside a call on the socket) is thrown by the call itself.
                op.EndSynchronously();
                throw;
            }

            op.Error = error;
            return Outcome.Failed;
        }

        op.IsPending = true;
        op.Token = token;
        AsyncOperation? receiveDone = null;
        AsyncOperation? sendDone = null;
        Pump(ref receiveDone, ref sendDone);
        AfterPump(ref receiveDone, ref sendDone);

        // The caller's own operation completing here is returned as a completed ValueTask; the
        // other direction's completion must not run its continuation on the caller's thread.
        AsyncOperation? own = op.Receives ? receiveDone : sendDone;
        (op.Receives ? sendDone : receiveDone)?.Dispatch();
        if (own is not null)
        {
            return own.Error is null ? Outcome.Done : Outcome.Failed;
        }

        if (token.CanBeCanceled)
        {
            // Registered under the lock, so no completion can take the registration before it is
            // stored. A cancellation that happened meanwhile runs the callback now, on this thread
            // (Lock is re-entrant): it completes the operation and queues its continuation.
            CancellationTokenRegistration registration = token.UnsafeRegister(CancelCallback, op);
            if (op.IsPending)
            {
                op.Registration = registration;
            }
        }

        return Outcome.Pending;
    }

    /// <summary>Under the lock, after a call that completed at once: pump what waits, re-arm, queue what ended.</summary>
    private void PumpOther()
    {
        AsyncOperation? receiveDone = null;
        AsyncOperation? sendDone = null;
        Pump(ref receiveDone, ref sendDone);
        AfterPump(ref receiveDone, ref sendDone);
        receiveDone?.Dispatch();
        sendDone?.Dispatch();
    }

    private bool AttemptLeased(AsyncOperation op)
    {
        using var socket = SocketLease.Acquire(Handle, op.Name);
        return Attempt(op, socket.Value);
    }

    /// <summary>Tries every pending operation until none can progress; completes those that end.</summary>
    private void Pump(ref AsyncOperation? receiveDone, ref AsyncOperation? sendDone)
    {
        nint socket = Handle.DangerousGetHandle();
        int readyTries = 0;
        while (true)
        {
            TryOne(_receive, socket, ref receiveDone);
            TryOne(_send, socket, ref sendDone);
            if (!_receive.IsPending && !_send.IsPending)
            {
                return;
            }

            // After every attempt: EVENTS, which also processes the socket's pending commands, so
            // that the descriptor signals whatever changes from here on.
            int events = 0;
            nuint size = sizeof(int);
            if (Native.GetOption(socket, ZlinkConstants.ZLINK_EVENTS, &events, &size) != 0)
            {
                FailAll(Ensure.Create(Native.Errno(), ErrorScope.General, "Events", null, null), ref receiveDone, ref sendDone);
                return;
            }

            bool ready = (_receive.IsPending && (events & ZlinkConstants.POLLIN) != 0)
                || (_send.IsPending && (events & ZlinkConstants.POLLOUT) != 0);
            if (!ready || ++readyTries > ReadyRetries)
            {
                return;
            }
        }
    }

    /// <summary>After a pump, under the lock: arm the reactor while something waits, else give the socket back.</summary>
    private void AfterPump(ref AsyncOperation? receiveDone, ref AsyncOperation? sendDone)
    {
        if (_receive.IsPending || _send.IsPending)
        {
            try
            {
                if (_fd < 0)
                {
                    int fd = 0;
                    nuint size = sizeof(int);
                    if (Native.GetOption(Handle.DangerousGetHandle(), ZlinkConstants.ZLINK_FD, &fd, &size) != 0)
                    {
                        Ensure.Throw(Native.Errno(), "FileDescriptor");
                    }

                    _fd = fd;
                }

                SocketReactor.Arm(this, _fd);
            }
            catch (Exception error)
            {
                FailAll(error, ref receiveDone, ref sendDone);
            }
        }

        ReleaseIfIdle();
    }

    private static void TryOne(AsyncOperation op, nint socket, ref AsyncOperation? done)
    {
        if (!op.IsPending)
        {
            return;
        }

        try
        {
            if (Attempt(op, socket))
            {
                Complete(op, null, ref done);
            }
        }
        catch (Exception error)
        {
            Complete(op, error, ref done);
        }
    }

    private void FailAll(Exception error, ref AsyncOperation? receiveDone, ref AsyncOperation? sendDone)
    {
        if (_receive.IsPending)
        {
            Complete(_receive, error, ref receiveDone);
        }

        if (_send.IsPending)
        {
            Complete(_send, error, ref sendDone);
        }
    }

    /// <summary>Under the lock: the pending operation ends; its continuation is signalled by the caller after the lock.</summary>
    private static void Complete(AsyncOperation op, Exception? error, ref AsyncOperation? done)
    {
        op.End(error);
        done = op;
    }

    /// <summary>Under the lock: with no operation waiting, the socket's owner word is given back.</summary>
    private void ReleaseIfIdle()
    {
        if (_holding && !_receive.IsPending && !_send.IsPending)
        {
            _holding = false;
            Handle.ExitCall(null);
        }
    }

    private void Cancel(AsyncOperation op, CancellationToken token)
    {
        AsyncOperation? done = null;
        lock (_gate)
        {
            if (!op.IsPending || op.Token != token)
            {
                return;
            }

            Complete(op, new OperationCanceledException($"{op.Name} was cancelled.", token), ref done);
            ReleaseIfIdle();
        }

        done!.Dispatch();
    }

    /// <summary>One DONTWAIT try of <paramref name="op"/>: true when it completed; throws on a real error.</summary>
    private static bool Attempt(AsyncOperation op, nint socket)
    {
        switch (op.Kind)
        {
            case AsyncKind.ReceiveBuffer:
                fixed (byte* p = op.Buffer.Span)
                {
                    int size = Native.Receive(socket, p, (nuint)op.Buffer.Length, ZlinkConstants.ZLINK_DONTWAIT);
                    if (size >= 0)
                    {
                        op.Result = size;
                        return true;
                    }
                }

                return WouldBlock(op.Name);

            case AsyncKind.ReceiveMessage:
            {
                using var msg = op.Message!.Lease();
                if (Native.MsgReceive((ZlinkMsg*)msg.Value, socket, ZlinkConstants.ZLINK_DONTWAIT) >= 0)
                {
                    return true;
                }

                return WouldBlock(op.Name);
            }

            case AsyncKind.ReceiveMultipart:
                return FrameReader.ReceiveMultipart(socket, op.Parts!, ZlinkConstants.ZLINK_DONTWAIT, op.Name);

            case AsyncKind.SendBuffer:
                fixed (byte* p = op.Data.Span)
                {
                    if (Native.Send(socket, p, (nuint)op.Data.Length, (int)(op.Flags | SendFlags.DontWait)) >= 0)
                    {
                        return true;
                    }
                }

                return SendWouldBlock(op.Name, socket);

            case AsyncKind.SendMessage:
            {
                using var msg = op.Message!.Lease();
                if (Native.MsgSend((ZlinkMsg*)msg.Value, socket, (int)(op.Flags | SendFlags.DontWait)) >= 0)
                {
                    return true;
                }

                return SendWouldBlock(op.Name, socket);
            }

            default:
                return SendMultipart(socket, op.SendParts!, op.Name);
        }
    }

    /// <summary>
    /// Every frame with DONTWAIT. A refusal of the first frame leaves nothing sent. A later frame
    /// is not refused by zlink's libzmq sockets once the first was taken (the high-water mark
    /// counts whole messages), and a STREAM socket (or a DEALER whose pipe went away) drops the
    /// whole message when it refuses one: either way nothing of the message is left selected, and
    /// the next try sends it whole again.
    /// </summary>
    private static bool SendMultipart(nint socket, IReadOnlyList<ReadOnlyMemory<byte>> parts, string name)
    {
        int last = parts.Count - 1;
        for (int i = 0; i <= last; i++)
        {
            ReadOnlySpan<byte> part = parts[i].Span;
            int flags = ZlinkConstants.ZLINK_DONTWAIT | (i < last ? ZlinkConstants.ZLINK_SNDMORE : 0);
            fixed (byte* p = part)
            {
                if (Native.Send(socket, p, (nuint)part.Length, flags) < 0)
                {
                    return SendWouldBlock(name, socket);
                }
            }
        }

        return true;
    }

    private static bool SendWouldBlock(string name, nint socket)
    {
        int errno = Native.Errno();
        if (!Native.IsRetry(errno))
        {
            Ensure.ThrowSend(errno, name, socket);
        }

        return false;
    }

    private static bool WouldBlock(string name)
    {
        int errno = Native.Errno();
        if (!Native.IsRetry(errno))
        {
            Ensure.Throw(errno, name);
        }

        return false;
    }

    private enum Outcome
    {
        Done,
        Failed,
        Pending,
    }
}
