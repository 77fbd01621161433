// Native's libc calls: the shard's wake eventfd and deadline timerfd, the open-file limit and the
// async reactor's epoll (see Native.Socket.cs for what the proxy is). Failures are -1 with the
// error in Marshal.GetLastSystemError(), as libc reports them.
using System.Runtime.CompilerServices;

namespace NetZlink.Interop;

internal static unsafe partial class Native
{
    internal const int EpollAdd = LibcMethods.EPOLL_CTL_ADD;
    internal const int EpollModify = LibcMethods.EPOLL_CTL_MOD;

    /// <summary>A non-blocking, close-on-exec eventfd starting at 0.</summary>
    internal static int WakeEventCreate() => LibcMethods.eventfd(0, LibcMethods.EFD_NONBLOCK | LibcMethods.EFD_CLOEXEC);

    /// <summary>A non-blocking, close-on-exec CLOCK_MONOTONIC timerfd.</summary>
    internal static int MonotonicTimerCreate() =>
        LibcMethods.timerfd_create(LibcMethods.CLOCK_MONOTONIC, LibcMethods.TFD_NONBLOCK | LibcMethods.TFD_CLOEXEC);

    /// <summary>Arms <paramref name="timerFd"/> once for the CLOCK_MONOTONIC time <paramref name="nanoseconds"/>.</summary>
    internal static bool TimerArmAt(int timerFd, long nanoseconds)
    {
        var spec = new LibcMethods.ITimerSpec { Value = LibcMethods.TimeSpec.FromNanoseconds(nanoseconds) };
        return LibcMethods.timerfd_settime(timerFd, LibcMethods.TFD_TIMER_ABSTIME, &spec, null) == 0;
    }

    /// <summary>Reads an eventfd's or timerfd's 8-byte counter (resetting it); 0 when nothing was there.</summary>
    [MethodImpl(Inline)]
    internal static ulong CounterRead(int fd)
    {
        ulong value = 0;
        _ = LibcMethods.read(fd, &value, sizeof(ulong));
        return value;
    }

    /// <summary>Adds <paramref name="value"/> to an eventfd's counter.</summary>
    [MethodImpl(Inline)]
    internal static void CounterAdd(int fd, ulong value) => _ = LibcMethods.write(fd, &value, sizeof(ulong));

    [MethodImpl(Inline)]
    internal static int CloseDescriptor(int fd) => LibcMethods.close(fd);

    /// <summary>RLIMIT_NOFILE (soft, hard); false with errno in Marshal.GetLastSystemError().</summary>
    internal static bool DescriptorLimitGet(out ulong soft, out ulong hard)
    {
        LibcMethods.RLimit limit;
        bool ok = LibcMethods.getrlimit(LibcMethods.RLIMIT_NOFILE, &limit) == 0;
        soft = ok ? limit.Current : 0;
        hard = ok ? limit.Maximum : 0;
        return ok;
    }

    /// <summary>Sets RLIMIT_NOFILE; false with errno in Marshal.GetLastSystemError().</summary>
    internal static bool DescriptorLimitSet(ulong soft, ulong hard)
    {
        LibcMethods.RLimit limit = new() { Current = soft, Maximum = hard };
        return LibcMethods.setrlimit(LibcMethods.RLIMIT_NOFILE, &limit) == 0;
    }

    /// <summary>A close-on-exec epoll descriptor, or -1.</summary>
    internal static int EpollCreate() => LibcMethods.epoll_create1(LibcMethods.EPOLL_CLOEXEC);

    /// <summary>
    /// Adds (<see cref="EpollAdd"/>) or re-arms (<see cref="EpollModify"/>) <paramref name="fd"/>
    /// for one readable wake-up (EPOLLIN | EPOLLONESHOT) carrying <paramref name="key"/>.
    /// </summary>
    internal static int EpollArm(int epoll, int op, int fd, ulong key)
    {
        byte* ev = stackalloc byte[16];
        *(uint*)ev = LibcMethods.EPOLLIN | LibcMethods.EPOLLONESHOT;
        *(ulong*)(ev + LibcMethods.EpollDataOffset) = key;
        return LibcMethods.epoll_ctl(epoll, op, fd, ev);
    }

    /// <summary>Removes <paramref name="fd"/> from <paramref name="epoll"/>.</summary>
    internal static int EpollRemove(int epoll, int fd)
    {
        byte* unused = stackalloc byte[16];
        return LibcMethods.epoll_ctl(epoll, LibcMethods.EPOLL_CTL_DEL, fd, unused);
    }

    /// <summary>The size of one struct epoll_event, for the buffer <see cref="EpollWait"/> fills.</summary>
    internal static int EpollEventSize => LibcMethods.EpollEventSize;

    /// <summary>Waits for events (-1 on a signal: wait again).</summary>
    [MethodImpl(Inline)]
    internal static int EpollWait(int epoll, byte* events, int maxEvents, int timeout) => LibcMethods.epoll_wait(epoll, events, maxEvents, timeout);

    /// <summary>The key of the <paramref name="index"/>th event in a buffer <see cref="EpollWait"/> filled.</summary>
    [MethodImpl(Inline)]
    internal static ulong EpollKeyAt(byte* events, int index) =>
        *(ulong*)(events + (index * LibcMethods.EpollEventSize) + LibcMethods.EpollDataOffset);
}
