using System.Diagnostics.CodeAnalysis;
using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>
/// Synchronous reads of a service queue (the <c>TryReceive(TimeSpan, out …)</c> methods), for
/// callers with a thread of their own: the thread that fills the queue wakes a waiting reader
/// directly (<see cref="Signal"/>), with no thread-pool continuation in between.
/// </summary>
/// <remarks>
/// A reader counts itself before its last look at the queue, under <see cref="_signal"/>; a writer
/// writes, then (after a full fence) reads the count and pulses under the same lock. So either the
/// reader's look sees the message or the writer sees the reader, and its pulse cannot come between
/// the reader's look and its wait.
/// </remarks>
internal sealed class BlockingReads
{
    private readonly object _signal = new();
    private int _waiters;

    /// <summary>Readers blocked (or about to block) now.</summary>
    public int Waiters => Volatile.Read(ref _waiters);

    /// <summary>Wakes the waiting readers, if any: call after writing to the queue or completing it.</summary>
    public void Signal()
    {
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _waiters) != 0)
        {
            lock (_signal)
            {
                Monitor.PulseAll(_signal);
            }
        }
    }

    /// <summary>Milliseconds to wait for <paramref name="timeout"/> (-1: no limit).</summary>
    public static int Milliseconds(TimeSpan timeout)
    {
        double ms = timeout.TotalMilliseconds;
        if (timeout != Timeout.InfiniteTimeSpan && (ms < 0 || ms > int.MaxValue))
        {
            throw new ArgumentOutOfRangeException(nameof(timeout), timeout, "a timeout is zero or more (at most int.MaxValue ms), or Timeout.InfiniteTimeSpan");
        }

        return timeout == Timeout.InfiniteTimeSpan ? -1 : (int)Math.Ceiling(ms);
    }

    /// <summary>
    /// Takes the next item of <paramref name="queue"/>, waiting up to <paramref name="timeoutMs"/>
    /// (-1: no limit) for a writer that calls <see cref="Signal"/>. <paramref name="tryTake"/> is the
    /// read (it may look further than the queue). False: the time passed. A completed and empty
    /// queue throws as its ReadAsync does (<see cref="ChannelClosedException"/>).
    /// </summary>
    public bool TryTake<T>(ChannelReader<T> queue, TryTakeFunc<T> tryTake, int timeoutMs, [MaybeNullWhen(false)] out T item)
    {
        long start = Environment.TickCount64;
        Interlocked.Increment(ref _waiters);
        try
        {
            lock (_signal)
            {
                while (true)
                {
                    if (tryTake(out item))
                    {
                        return true;
                    }

                    if (queue.Completion.IsCompleted)
                    {
                        // Throws what a read of the ended queue throws (its reason kept).
                        item = queue.ReadAsync().AsTask().GetAwaiter().GetResult();
                        return true;
                    }

                    int left = timeoutMs < 0 ? -1 : (int)Math.Max(0, timeoutMs - (Environment.TickCount64 - start));
                    if (left == 0)
                    {
                        return false;
                    }

                    Monitor.Wait(_signal, left);
                }
            }
        }
        finally
        {
            Interlocked.Decrement(ref _waiters);
        }
    }

    public delegate bool TryTakeFunc<T>([MaybeNullWhen(false)] out T item);
}
