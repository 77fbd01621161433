// A point in time for the Try*(…, TimeSpan timeout) loops, on the monotonic tick clock. It also
// remembers whether an earlier wait of the same loop reported "ready", which is how WaitFor
// notices a readiness that did not help and backs off instead of spinning.
namespace NetZlink.Interop;

internal struct Deadline
{
    private readonly long _end;
    private bool _wasReady;

    private Deadline(long end) => _end = end;

    internal readonly bool IsInfinite => _end < 0;

    internal static Deadline After(TimeSpan timeout)
    {
        if (timeout == Timeout.InfiniteTimeSpan)
        {
            return new Deadline(-1);
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(timeout, TimeSpan.Zero);
        return new Deadline(Environment.TickCount64 + (long)Math.Ceiling(timeout.TotalMilliseconds));
    }

    /// <summary>Milliseconds left, clamped to int; -1 for an infinite deadline, 0 once passed.</summary>
    internal readonly int RemainingMilliseconds()
    {
        if (IsInfinite)
        {
            return -1;
        }

        return (int)Math.Clamp(_end - Environment.TickCount64, 0, int.MaxValue);
    }

    /// <summary>True when a previous wait already reported ready; records this one as ready.</summary>
    internal bool ReadyBefore()
    {
        bool before = _wasReady;
        _wasReady = true;
        return before;
    }
}
