// The async reactor: a small fixed set of threads (1 by default; NETZLINK_REACTOR_THREADS, at
// most the processor count) each sleeping in epoll_wait on the ZLINK_FD descriptors of the sockets
// whose async operations wait. A descriptor is armed one-shot (EPOLLIN | EPOLLONESHOT) only while
// an operation waits, so a socket nobody awaits costs no wake-up. When it fires, the reactor only
// queues the socket's AsyncSocketState to the thread pool (an IThreadPoolWorkItem: no allocation);
// the native calls and the completions happen there, under the socket's own lock.
//
// The descriptor is libzmq's "something changed" signal, not a level: a one-shot arm reports it
// at once if it is readable already, and the state re-reads EVENTS after every send and receive
// before it arms again, so no signal is lost between the failed attempt and the arm.
//
// Sockets are named in epoll_event.data by a slot number and the slot's generation, never by a
// pointer: an event already taken by epoll_wait for a socket closed meanwhile finds another
// generation in the slot and is dropped.
using System.Globalization;
using System.Runtime.InteropServices;

namespace NetZlink.Interop;

internal sealed unsafe class SocketReactor
{
    /// <summary>The environment variable that sets the number of reactor threads (default 1).</summary>
    internal const string ThreadsVariable = "NETZLINK_REACTOR_THREADS";

    private const int MaxEvents = 256;

    private static readonly Lazy<SocketReactor[]> Reactors = new(Start);
    private static int s_next;

    private readonly int _epoll;
    private readonly Lock _gate = new();
    private AsyncSocketState?[] _slots = new AsyncSocketState?[64];
    private uint[] _generations = new uint[64];
    private readonly Stack<int> _free = new();
    private int _used;

    private SocketReactor(int index)
    {
        _epoll = Native.EpollCreate();
        if (_epoll < 0)
        {
            throw new ZlinkException(Marshal.GetLastSystemError(), "SocketReactor: epoll_create1", "the async reactor could not create its epoll descriptor");
        }

        var thread = new Thread(Run) { IsBackground = true, Name = $"NetZlink reactor {index}" };
        thread.UnsafeStart();
    }

    /// <summary>How many reactor threads run (started at the first async wait of the process).</summary>
    internal static int ThreadCount => Reactors.Value.Length;

    /// <summary>
    /// Arms <paramref name="state"/>'s descriptor for one wake-up, registering it with a reactor
    /// the first time. Called with the state's lock held.
    /// </summary>
    internal static void Arm(AsyncSocketState state, int fd)
    {
        if (state.Reactor is null)
        {
            SocketReactor[] reactors = Reactors.Value;
            SocketReactor reactor = reactors[(int)((uint)Interlocked.Increment(ref s_next) % (uint)reactors.Length)];
            reactor.Register(state, fd);
            return;
        }

        state.Reactor.Control(Native.EpollModify, fd, state.ReactorKey, "epoll_ctl(MOD)");
    }

    /// <summary>Forgets <paramref name="state"/> before its socket (and so its descriptor) is closed.</summary>
    internal static void Remove(AsyncSocketState state, int fd)
    {
        SocketReactor? reactor = state.Reactor;
        if (reactor is null)
        {
            return;
        }

        _ = Native.EpollRemove(reactor._epoll, fd);
        int slot = (int)(uint)state.ReactorKey;
        lock (reactor._gate)
        {
            reactor._slots[slot] = null;
            reactor._generations[slot]++;
            reactor._free.Push(slot);
        }

        state.Reactor = null;
    }

    private static SocketReactor[] Start()
    {
        int count = 1;
        string? text = Environment.GetEnvironmentVariable(ThreadsVariable);
        if (!string.IsNullOrEmpty(text))
        {
            if (!int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out count) || count < 1)
            {
                throw new InvalidOperationException($"{ThreadsVariable}={text} is not a positive integer.");
            }

            count = Math.Min(count, Environment.ProcessorCount);
        }

        var reactors = new SocketReactor[count];
        for (int i = 0; i < count; i++)
        {
            reactors[i] = new SocketReactor(i);
        }

        return reactors;
    }

    private void Register(AsyncSocketState state, int fd)
    {
        ulong key;
        lock (_gate)
        {
            int slot;
            if (!_free.TryPop(out slot))
            {
                if (_used == _slots.Length)
                {
                    Array.Resize(ref _slots, _slots.Length * 2);
                    Array.Resize(ref _generations, _generations.Length * 2);
                }

                slot = _used++;
            }

            _slots[slot] = state;
            key = ((ulong)_generations[slot] << 32) | (uint)slot;
        }

        state.Reactor = this;
        state.ReactorKey = key;
        try
        {
            Control(Native.EpollAdd, fd, key, "epoll_ctl(ADD)");
        }
        catch
        {
            Remove(state, fd);
            throw;
        }
    }

    private void Control(int op, int fd, ulong key, string operation)
    {
        if (Native.EpollArm(_epoll, op, fd, key) != 0)
        {
            int errno = Marshal.GetLastSystemError();
            throw new ZlinkException(errno, $"SocketReactor: {operation} of descriptor {fd}", $"the async reactor could not wait for the socket (errno {errno})");
        }
    }

    private void Run()
    {
        int size = Native.EpollEventSize;
        byte* events = (byte*)NativeMemory.Alloc((nuint)(MaxEvents * size));
        while (true)
        {
            int count = Native.EpollWait(_epoll, events, MaxEvents, -1);
            if (count < 0)
            {
                // EINTR (a signal, a debugger): wait again. Nothing else can happen to a valid epoll
                // descriptor with a valid buffer.
                continue;
            }

            for (int i = 0; i < count; i++)
            {
                ulong key = Native.EpollKeyAt(events, i);
                int slot = (int)(uint)key;
                AsyncSocketState? state;
                lock (_gate)
                {
                    state = slot < _used && _generations[slot] == (uint)(key >> 32) ? _slots[slot] : null;
                }

                if (state is not null)
                {
                    ThreadPool.UnsafeQueueUserWorkItem(state, preferLocal: false);
                }
            }
        }
    }
}
