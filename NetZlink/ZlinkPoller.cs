// Waits on several sockets and raw file descriptors at once (zlink_poll). The item array is
// kept between polls and each poll only re-reads the socket handles, so Poll allocates nothing.
using NetZlink.Interop;

namespace NetZlink;

/// <summary>
/// Polls a set of sockets and file descriptors. Add items, then call <see cref="Poll(TimeSpan)"/>
/// and read each item's <see cref="GetReturnedEvents"/>. Not thread-safe. For the length of a
/// <see cref="Poll(long)"/> the poller holds each of its sockets as a call on it would: another
/// thread's call on one of them is refused with <see cref="InvalidOperationException"/> (see
/// <see cref="ZlinkSocket"/>), and so is the poll when another thread is inside a call on one of them.
/// </summary>
public sealed unsafe class ZlinkPoller
{
    private ZlinkPollItem[] _items = new ZlinkPollItem[4];
    private ZlinkSocket?[] _sockets = new ZlinkSocket?[4];
    private bool[] _leased = new bool[4];
    private SocketHandle.BiasToken?[] _biases = new SocketHandle.BiasToken?[4];

    /// <summary>Number of items.</summary>
    public int Count { get; private set; }

    /// <summary>Adds a socket.</summary>
    /// <param name="socket">The socket; it must stay open while it is polled.</param>
    /// <param name="events">What to wait for.</param>
    /// <returns>The item's index.</returns>
    /// <exception cref="ObjectDisposedException">The socket was disposed already.</exception>
    public int Add(ZlinkSocket socket, PollEvents events)
    {
        ArgumentNullException.ThrowIfNull(socket);
        if (socket.IsDisposed)
        {
            HandleLease.ThrowDisposed($"{nameof(ZlinkSocket)} ({socket.Type}; ZlinkPoller.Add: a disposed socket cannot be polled)");
        }

        return AddItem(socket, new ZlinkPollItem { Events = (short)events });
    }

    /// <summary>Adds a raw file descriptor (a .NET socket's handle, a pipe, an eventfd…).</summary>
    /// <param name="fileDescriptor">The descriptor.</param>
    /// <param name="events">What to wait for.</param>
    /// <returns>The item's index.</returns>
    public int Add(int fileDescriptor, PollEvents events)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(fileDescriptor);
        return AddItem(null, new ZlinkPollItem { Fd = fileDescriptor, Events = (short)events });
    }

    /// <summary>Changes what item <paramref name="index"/> waits for.</summary>
    /// <param name="index">The item.</param>
    /// <param name="events">What to wait for.</param>
    public void SetEvents(int index, PollEvents events)
    {
        CheckIndex(index);
        _items[index].Events = (short)events;
    }

    /// <summary>Removes item <paramref name="index"/>; the items after it move down by one.</summary>
    /// <param name="index">The item.</param>
    public void RemoveAt(int index)
    {
        CheckIndex(index);
        Array.Copy(_items, index + 1, _items, index, Count - index - 1);
        Array.Copy(_sockets, index + 1, _sockets, index, Count - index - 1);
        Count--;
        _sockets[Count] = null;
    }

    /// <summary>The socket of item <paramref name="index"/>, or null for a file descriptor.</summary>
    /// <param name="index">The item.</param>
    /// <returns>The socket.</returns>
    public ZlinkSocket? GetSocket(int index)
    {
        CheckIndex(index);
        return _sockets[index];
    }

    /// <summary>What the last poll found for item <paramref name="index"/>.</summary>
    /// <param name="index">The item.</param>
    /// <returns>The events found (None when not ready).</returns>
    public PollEvents GetReturnedEvents(int index)
    {
        CheckIndex(index);
        return (PollEvents)_items[index].Revents;
    }

    /// <summary>Waits until at least one item is ready or <paramref name="timeout"/> passes.</summary>
    /// <param name="timeout">How long to wait; <see cref="TimeSpan.Zero"/> to check, <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <returns>The number of ready items; 0 when the timeout passed (or a signal interrupted the wait).</returns>
    /// <exception cref="ContextTerminatedException">A polled socket's context was shut down.</exception>
    /// <exception cref="ObjectDisposedException">A polled socket was disposed.</exception>
    /// <exception cref="InvalidOperationException">Another thread is inside a call on one of the sockets.</exception>
    public int Poll(TimeSpan timeout)
    {
        long milliseconds = timeout == Timeout.InfiniteTimeSpan ? -1 : (long)Math.Ceiling(timeout.TotalMilliseconds);
        ArgumentOutOfRangeException.ThrowIfLessThan(milliseconds, -1, nameof(timeout));
        return Poll(milliseconds);
    }

    /// <summary>Waits until at least one item is ready or <paramref name="timeoutMilliseconds"/> pass (-1 for ever).</summary>
    /// <param name="timeoutMilliseconds">The timeout in milliseconds; 0 to check, -1 for ever.</param>
    /// <returns>The number of ready items; 0 when the timeout passed (or a signal interrupted the wait).</returns>
    /// <exception cref="InvalidOperationException">Another thread is inside a call on one of the sockets.</exception>
    public int Poll(long timeoutMilliseconds)
    {
        int count = Count;
        try
        {
            // Take every socket for the length of the wait, as any call on it does: another
            // thread's call on one of them is refused meanwhile, and a concurrent Dispose cannot
            // close one under zlink_poll. A socket in several items is taken once.
            for (int i = 0; i < count; i++)
            {
                _items[i].Revents = 0;
                if (_sockets[i] is { } socket)
                {
                    _items[i].Socket = Take(socket.Handle, i);
                }
            }

            fixed (ZlinkPollItem* items = _items)
            {
                int ready = Native.Poll(items, count, (nint)timeoutMilliseconds);
                if (ready >= 0)
                {
                    return ready;
                }
            }

            Ensure.Throw(Native.Errno(), "Poll");
            return 0;
        }
        finally
        {
            for (int i = 0; i < count; i++)
            {
                if (_leased[i])
                {
                    _leased[i] = false;
                    _sockets[i]!.Handle.ExitCall(_biases[i]);
                    _biases[i] = null;
                }
            }
        }
    }

    /// <summary>Takes item <paramref name="index"/>'s socket for the poll (unless an earlier item of this poll took it); returns the native pointer.</summary>
    private nint Take(SocketHandle handle, int index)
    {
        if (handle.IsHeldByCurrentThread)
        {
            for (int j = 0; j < index; j++)
            {
                if (_leased[j] && _sockets[j]!.Handle == handle)
                {
                    return handle.DangerousGetHandle();
                }
            }
        }

        try
        {
            nint pointer = handle.EnterCall("Poll", out _biases[index]);
            _leased[index] = true;
            return pointer;
        }
        catch (ObjectDisposedException)
        {
            HandleLease.ThrowDisposed($"{nameof(ZlinkSocket)} (poller item {index})");
            throw;
        }
    }

    private int AddItem(ZlinkSocket? socket, ZlinkPollItem item)
    {
        if (Count == _items.Length)
        {
            Array.Resize(ref _items, Count * 2);
            Array.Resize(ref _sockets, Count * 2);
            Array.Resize(ref _leased, Count * 2);
            Array.Resize(ref _biases, Count * 2);
        }

        _items[Count] = item;
        _sockets[Count] = socket;
        return Count++;
    }

    private void CheckIndex(int index) => ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)index, (uint)Count, nameof(index));
}
