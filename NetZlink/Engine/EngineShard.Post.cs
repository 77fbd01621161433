// Frames other threads hand to a shard (ClientEngine.TrySend / SendAsync), with bounded memory
// and exact accounting.
//
// Capacity: a posted frame holds capacity from the moment TrySend accepts it until the native
// socket has taken it (or it is dropped): at most SendQueueCapacityPerConnection bytes per connection
// and SendQueueCapacityPerShard bytes per shard, or one frame where that frame alone is larger. That covers the post queue and, for a connection whose
// socket queue is at its high-water mark, the frames waiting in its retry buffer; a slow peer
// therefore makes TrySend say no (and SendAsync wait) instead of growing memory or dropping.
//
// Accounting: every accepted frame ends exactly once, as sent (the socket took it) or as dropped
// with a reason (its connection was not established when the frame's turn came or ended before
// the frame went out; or the shard stopped with the frame still held). Accepted = Sent +
// DroppedClosed + DroppedStopped once the engine has stopped.
//
// Closing: the shard shuts the gate (under _postGate) before it ends its connections and empties
// its queue, and TrySend enqueues only under the same gate while it is open, so no frame can be
// enqueued after the last drain.
using System.Collections.Concurrent;

namespace NetZlink.Engine;

public sealed unsafe partial class EngineShard
{
    private readonly ConcurrentQueue<PostedFrame> _posted = new();
    private readonly Lock _postGate = new();
    private readonly int[] _postedBytesBySlot;
    private long _postedBytes;
    private long _postsAccepted;
    private bool _postClosed;
    private bool _postDraining;
    private long _refusedDraining;
    private TaskCompletionSource? _room;

    internal enum PostStatus
    {
        Accepted,
        Full,
        Closed,
    }

    internal long PostsAccepted => Interlocked.Read(ref _postsAccepted);

    internal long PostedBytesHeld => Interlocked.Read(ref _postedBytes);

    /// <summary>Posts refused because the engine was draining.</summary>
    internal long RefusedDraining => Interlocked.Read(ref _refusedDraining);

    /// <summary>Any thread: copies the frame into a pooled buffer and queues it, if there is room.</summary>
    internal PostStatus TrySend(int slot, int connectionIndex, ReadOnlySpan<byte> frame)
    {
        // A capacity bounds what is held, never the size of one frame (docs/engine.md, "Frame
        // sizes"): a frame goes in while the total stays within the capacity, or when nothing
        // else is held (the sum is the frame itself), so a frame larger than the capacity waits
        // for the connection (and the shard) to be empty instead of being refused for ever.
        if (Volatile.Read(ref _postDraining))
        {
            // Refused for the drain whether or not there would be room (the check under the gate
            // below catches a drain that begins meanwhile).
            Interlocked.Increment(ref _refusedDraining);
            return PostStatus.Closed;
        }

        int length = frame.Length;
        int held = Interlocked.Add(ref _postedBytesBySlot[slot], length);
        if (held > _options.SendQueueCapacityPerConnection && held != length)
        {
            Interlocked.Add(ref _postedBytesBySlot[slot], -length);
            return PostStatus.Full;
        }

        long shardHeld = Interlocked.Add(ref _postedBytes, length);
        if (shardHeld > _options.SendQueueCapacityPerShard && shardHeld != length)
        {
            Unreserve(slot, length);
            return PostStatus.Full;
        }

        byte[] buffer = System.Buffers.ArrayPool<byte>.Shared.Rent(length);
        frame.CopyTo(buffer);
        // The generation the poster can know of: a frame is sent only to it, never to a later one.
        int life = Volatile.Read(ref _slots[slot].Life);
        lock (_postGate)
        {
            if (_postDraining)
            {
                Interlocked.Increment(ref _refusedDraining);
            }
            else if (!_postClosed)
            {
                _posted.Enqueue(new PostedFrame(slot, connectionIndex, life, buffer, length));
                _postsAccepted++;
                buffer = null!;
            }
        }

        if (buffer is not null)
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
            Unreserve(slot, length);
            return PostStatus.Closed;
        }

        Wake();
        return PostStatus.Accepted;
    }

    /// <summary>
    /// Any thread: a task that completes when this shard next gives posting capacity back (or
    /// closes to posts). The caller tries again after it; the caller must also try once more
    /// after taking the task, since room may have come back just before.
    /// </summary>
    internal Task RoomSignal()
    {
        Task task;
        lock (_postGate)
        {
            if (_postClosed || _postDraining)
            {
                return Task.CompletedTask;
            }

            _room ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            task = _room.Task;
        }

        // Pairs with the Interlocked.Add in ReleasePosted: either the shard sees _room and
        // signals it, or the caller's retry sees the capacity it gave back.
        Interlocked.MemoryBarrier();
        return task;
    }

    /// <summary>Shard thread: gives posting capacity back and wakes anyone waiting for it.</summary>
    private void ReleasePosted(int slot, int bytes)
    {
        Unreserve(slot, bytes);
        if (Volatile.Read(ref _room) is not null)
        {
            SignalRoom();
        }
    }

    /// <summary>Gives back capacity taken for a frame, on the connection and on the shard.</summary>
    private void Unreserve(int slot, int bytes)
    {
        Interlocked.Add(ref _postedBytesBySlot[slot], -bytes);
        Interlocked.Add(ref _postedBytes, -bytes);
    }

    private void SignalRoom()
    {
        TaskCompletionSource? room;
        lock (_postGate)
        {
            room = _room;
            _room = null;
        }

        room?.TrySetResult();
    }

    /// <summary>
    /// Shard thread: hands up to <see cref="MaxMessagesPerPass"/> posted frames to their
    /// connections, so that a flood of posts cannot starve the receive side; true when any.
    /// </summary>
    private bool DrainPosted()
    {
        int taken = 0;
        while (taken < MaxMessagesPerPass && _posted.TryDequeue(out PostedFrame frame))
        {
            taken++;
            ref ConnectionSlot s = ref _slots[frame.Slot];
            // A server slot may hold a later connection by now, and a client slot a reconnected
            // one: the frame was for the connection (and the generation) it names.
            SendResult result = s.State != ConnectionState.Connected || s.Serial != frame.ConnectionIndex || s.Life != frame.Life
                ? SendResult.Closed
                : SendCore(frame.Slot, frame.Buffer.AsSpan(0, frame.Length), posted: true);
            switch (result)
            {
                case SendResult.Sent:
                    Counters.PostsSent++;
                    s.PostsSentLive++;
                    ReleasePosted(frame.Slot, frame.Length);
                    break;
                case SendResult.Queued:
                    // Held in the connection's retry buffer; capacity comes back when it goes out.
                    s.PendingPostedFrames++;
                    s.PendingPostedBytes += frame.Length;
                    break;
                default:
                    Counters.PostsDroppedClosed++;
                    NoteDrainDroppedClosed();
                    ObservePostDropped(frame.Slot);
                    ReleasePosted(frame.Slot, frame.Length);
                    break;
            }

            System.Buffers.ArrayPool<byte>.Shared.Return(frame.Buffer);
        }

        return taken > 0;
    }

    /// <summary>Shard thread: the posted frames in a slot's retry buffer went out (sent) or were dropped with it.</summary>
    private void SettlePendingPosts(ref ConnectionSlot s, int slot, bool sent, bool stopping)
    {
        if (s.PendingPostedFrames == 0)
        {
            return;
        }

        if (sent)
        {
            Counters.PostsSent += s.PendingPostedFrames;
            s.PostsSentLive += s.PendingPostedFrames;
        }
        else if (stopping)
        {
            if (_drainDeadlinePassed)
            {
                Counters.PostsDroppedDeadline += s.PendingPostedFrames;
            }
            else
            {
                Counters.PostsDroppedStopped += s.PendingPostedFrames;
            }
        }
        else
        {
            Counters.PostsDroppedClosed += s.PendingPostedFrames;
            NoteDrainDroppedClosed();
            ObservePostDropped(slot);
        }

        int bytes = s.PendingPostedBytes;
        s.PendingPostedFrames = 0;
        s.PendingPostedBytes = 0;
        ReleasePosted(slot, bytes);
    }

    /// <summary>Shard thread, on the way out: no frame can be posted any more.</summary>
    private void CloseToPosts()
    {
        lock (_postGate)
        {
            _postClosed = true;
        }

        SignalRoom();
    }

    /// <summary>After <see cref="CloseToPosts"/>: every frame still queued is dropped and counted.</summary>
    private void DropPosted()
    {
        while (_posted.TryDequeue(out PostedFrame frame))
        {
            if (_drainDeadlinePassed)
            {
                Counters.PostsDroppedDeadline++;
            }
            else
            {
                Counters.PostsDroppedStopped++;
            }

            ReleasePosted(frame.Slot, frame.Length);
            System.Buffers.ArrayPool<byte>.Shared.Return(frame.Buffer);
        }
    }

    /// <summary>Any thread: from now on posts are refused (counted RefusedDraining), and senders
    /// waiting for room hear it; the first thing a drain does.</summary>
    internal void RefusePostsForDrain()
    {
        lock (_postGate)
        {
            _postDraining = true;
        }

        SignalRoom();
    }

    private readonly record struct PostedFrame(int Slot, int ConnectionIndex, int Life, byte[] Buffer, int Length);
}
