using System.Text;
using System.Threading.Channels;

namespace NetZlink.Services;

/// <summary>
/// Publishes on a <see cref="ZlinkSpotNode"/> (zlink's SPOT pub): each message goes to the node's
/// own subscribers whose subscriptions match its topic and, as <c>[topic][parts…]</c>, to every
/// peer node subscribed to it. Safe from any number of threads at once; a publish allocates nothing.
/// </summary>
public sealed class ZlinkSpotPublisher : IDisposable
{
    private readonly ZlinkSpotNode _node;
    private volatile bool _disposed;

    internal ZlinkSpotPublisher(ZlinkSpotNode node) => _node = node;

    /// <summary>Publishes a one-part message (zlink_spot_pub_publish).</summary>
    /// <param name="topic">1 to 255 bytes of UTF-8, without NUL.</param>
    /// <param name="payload">The part.</param>
    /// <exception cref="ArgumentException">The topic is not one zlink takes.</exception>
    /// <exception cref="ObjectDisposedException">The publisher or its node was disposed.</exception>
    public void Publish(string topic, ReadOnlySpan<byte> payload)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        Span<byte> t = stackalloc byte[ZlinkSpotNode.MaxTopicLength * 3];
        int n = ZlinkSpotNode.EncodeTopic(topic, t, nameof(topic));
        _node.Core.Publish(t[..n], payload, default, multipart: false);
    }

    /// <summary>Publishes a message of several parts.</summary>
    /// <param name="topic">1 to 255 bytes of UTF-8, without NUL.</param>
    /// <param name="parts">The parts (at least one).</param>
    /// <exception cref="ArgumentException">The topic is not one zlink takes, or there are no parts.</exception>
    /// <exception cref="ObjectDisposedException">The publisher or its node was disposed.</exception>
    public void Publish(string topic, ReadOnlySpan<ReadOnlyMemory<byte>> parts)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (parts.IsEmpty)
        {
            throw new ArgumentException("a SPOT message has at least one part after its topic", nameof(parts));
        }

        Span<byte> t = stackalloc byte[ZlinkSpotNode.MaxTopicLength * 3];
        int n = ZlinkSpotNode.EncodeTopic(topic, t, nameof(topic));
        _node.Core.Publish(t[..n], default, parts, multipart: true);
    }

    /// <summary>Ends the publisher (the node is not affected).</summary>
    public void Dispose() => _disposed = true;
}

/// <summary>
/// Receives from a <see cref="ZlinkSpotNode"/> (zlink's SPOT sub) what matches its subscriptions:
/// exact topics (<see cref="Subscribe"/>) and prefix patterns such as <c>chat:*</c>
/// (<see cref="SubscribePattern"/>), from the node's own publishers and from its peers. A message
/// that matches several subscriptions of one subscriber is received once. Messages are read with
/// <see cref="ReceiveAsync"/> or <see cref="Messages"/>; dispose each. Every member is safe from any thread.
/// </summary>
public sealed class ZlinkSpotSubscriber : IAsyncDisposable, IDisposable
{
    private readonly ZlinkSpotNode _node;
    private readonly Lock _gate = new();
    private readonly Channel<SpotMessage> _queue;
    private readonly BlockingReads _blocking = new();
    private readonly BlockingReads.TryTakeFunc<SpotMessage> _tryRead;
    private readonly HashSet<string> _topics = new(StringComparer.Ordinal);
    private readonly HashSet<string> _patterns = new(StringComparer.Ordinal);
    private volatile Filters _filters = Filters.Empty;
    private long _dropped;
    private bool _disposed;

    internal ZlinkSpotSubscriber(ZlinkSpotNode node, int capacity)
    {
        _node = node;
        _queue = Channel.CreateBounded<SpotMessage>(
            new BoundedChannelOptions(capacity) { FullMode = BoundedChannelFullMode.DropWrite, SingleReader = false, SingleWriter = false },
            m =>
            {
                Interlocked.Increment(ref _dropped);
                m.Dispose();
            });
        _tryRead = _queue.Reader.TryRead;
    }

    /// <summary>The received messages as a stream (the queue <see cref="ReceiveAsync"/> reads);
    /// it completes when the subscriber or its node is disposed. Dispose each message.</summary>
    public ChannelReader<SpotMessage> Messages => _queue.Reader;

    /// <summary>Messages dropped because the queue held its capacity unread (zlink drops them too).</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>The exact topics and patterns subscribed now.</summary>
    public IReadOnlyCollection<string> Subscriptions
    {
        get
        {
            lock (_gate)
            {
                return [.. _topics.Concat(_patterns).Order(StringComparer.Ordinal)];
            }
        }
    }

    /// <summary>Receives the next message. Dispose it when done.</summary>
    /// <param name="cancellationToken">Ends the wait.</param>
    /// <exception cref="ChannelClosedException">The subscriber or its node was disposed.</exception>
    public ValueTask<SpotMessage> ReceiveAsync(CancellationToken cancellationToken = default) => _queue.Reader.ReadAsync(cancellationToken);

    /// <summary>
    /// Receives the next message on the caller's thread, blocking it up to <paramref name="timeout"/>:
    /// for a caller with a thread of its own (a loop that does nothing else), where
    /// <see cref="ReceiveAsync"/> would resume on the thread pool after every wait. The thread that
    /// fills the queue wakes this caller directly. Safe from any number of threads at once, mixed
    /// with <see cref="ReceiveAsync"/> and <see cref="Messages"/>: each message goes to one reader.
    /// </summary>
    /// <param name="timeout">How long to wait: <see cref="TimeSpan.Zero"/> only looks,
    /// <see cref="Timeout.InfiniteTimeSpan"/> waits without a limit.</param>
    /// <param name="message">The message (dispose it when done); default when false is returned.</param>
    /// <returns>False when <paramref name="timeout"/> passed with nothing received.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than
    /// <see cref="Timeout.InfiniteTimeSpan"/>) or above <see cref="int.MaxValue"/> milliseconds.</exception>
    /// <exception cref="System.Threading.Channels.ChannelClosedException">The subscriber or its node was disposed (as <see cref="ReceiveAsync"/>).</exception>
    public bool TryReceive(TimeSpan timeout, out SpotMessage message) =>
        _blocking.TryTake(_queue.Reader, _tryRead, BlockingReads.Milliseconds(timeout), out message);

    /// <summary>Subscribes to one exact topic (zlink_spot_sub_subscribe); again: nothing changes.</summary>
    /// <param name="topic">1 to 255 bytes of UTF-8, without NUL.</param>
    public void Subscribe(string topic)
    {
        Span<byte> t = stackalloc byte[ZlinkSpotNode.MaxTopicLength * 3];
        byte[] bytes = t[..ZlinkSpotNode.EncodeTopic(topic, t, nameof(topic))].ToArray();
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (!_topics.Add(topic))
            {
                return;
            }

            _node.Core.AddFilter(bytes);
            _filters = _filters.With(bytes, prefix: false);
        }
    }

    /// <summary>Subscribes to every topic that starts with a prefix (zlink_spot_sub_subscribe_pattern):
    /// <c>chat:*</c> takes <c>chat:room1</c> and <c>chat:</c>; <c>*</c> takes every topic.</summary>
    /// <param name="pattern">The prefix and one <c>*</c> at the end (no other <c>*</c>), at most 255 bytes of UTF-8.</param>
    public void SubscribePattern(string pattern)
    {
        byte[] prefix = PatternPrefix(pattern, nameof(pattern)) ??
            throw new ArgumentException($"a pattern ends with its only '*' (\"{pattern}\" does not)", nameof(pattern));
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (!_patterns.Add(pattern))
            {
                return;
            }

            _node.Core.AddFilter(prefix);
            _filters = _filters.With(prefix, prefix: true);
        }
    }

    /// <summary>Removes a subscription made by <see cref="Subscribe"/> or <see cref="SubscribePattern"/>
    /// (zlink_spot_sub_unsubscribe), given as it was made: a string that is a pattern removes that
    /// pattern, else (or when no such pattern is subscribed) the exact topic.</summary>
    /// <param name="topicOrPattern">The topic, or the pattern with its <c>*</c>.</param>
    /// <exception cref="InvalidOperationException">Nothing is subscribed under that string.</exception>
    public void Unsubscribe(string topicOrPattern)
    {
        ArgumentException.ThrowIfNullOrEmpty(topicOrPattern);
        byte[]? prefix;
        try
        {
            prefix = PatternPrefix(topicOrPattern, nameof(topicOrPattern));
        }
        catch (ArgumentException)
        {
            prefix = null; // not a pattern: a topic that holds a '*'
        }

        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            bool pattern = prefix is not null && _patterns.Remove(topicOrPattern);
            if (!pattern && !_topics.Remove(topicOrPattern))
            {
                throw new InvalidOperationException($"\"{topicOrPattern}\" is not subscribed on this subscriber");
            }

            byte[] filter = pattern ? prefix! : Encoding.UTF8.GetBytes(topicOrPattern);
            _filters = _filters.Without(filter, pattern);
            _node.Core.RemoveFilter(filter);
        }
    }

    /// <summary>The prefix of a pattern; null when <paramref name="value"/> has no '*' (a topic).</summary>
    private static byte[]? PatternPrefix(string value, string paramName)
    {
        ArgumentException.ThrowIfNullOrEmpty(value, paramName);
        int star = value.IndexOf('*', StringComparison.Ordinal);
        if (star < 0)
        {
            return null;
        }

        if (star != value.Length - 1)
        {
            throw new ArgumentException($"a pattern has one '*', at its end (\"{value}\" does not)", paramName);
        }

        if (star == 0)
        {
            return [];
        }

        Span<byte> t = stackalloc byte[ZlinkSpotNode.MaxTopicLength * 3];
        int n = ZlinkSpotNode.EncodeTopic(value[..star], t, paramName);
        if (n + 1 > ZlinkSpotNode.MaxTopicLength)
        {
            throw new ArgumentException($"a pattern has at most {ZlinkSpotNode.MaxTopicLength} bytes of UTF-8 with its '*'", paramName);
        }

        return t[..n].ToArray();
    }

    internal bool Matches(ReadOnlySpan<byte> topic) => _filters.Matches(topic);

    /// <param name="m">The message, now the subscriber's.</param>
    /// <param name="signal">Wake a waiting synchronous reader now; false when the caller calls
    /// <see cref="Signal"/> itself after a run of messages (the node's drain).</param>
    internal void Enqueue(ServiceMessage m, bool signal = true)
    {
        if (!_queue.Writer.TryWrite(new SpotMessage(m)))
        {
            m.Dispose(); // disposed: nobody reads any more
        }

        if (signal)
        {
            Signal();
        }
    }

    /// <summary>Wakes a synchronous reader (TryReceive) waiting for what was enqueued: it waits on this, not on the queue.</summary>
    internal void Signal() => _blocking.Signal();

    internal void Complete()
    {
        lock (_gate)
        {
            _disposed = true;
            _filters = Filters.Empty;
        }

        _queue.Writer.TryComplete();
        _blocking.Signal();
        while (_queue.Reader.TryRead(out SpotMessage m))
        {
            m.Dispose();
        }
    }

    /// <summary>Removes every subscription and ends <see cref="Messages"/> (what was unread is dropped).</summary>
    public void Dispose()
    {
        List<byte[]> filters;
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            filters = [.. _filters.AllFilters()];
        }

        _node.Core.RemoveSubscriber(this, filters);
        Complete();
    }

    /// <summary>As <see cref="Dispose"/>.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    /// <summary>An immutable view of the subscriptions, replaced whole on each change, so that
    /// the node's threads match without a lock.</summary>
    private sealed class Filters
    {
        public static readonly Filters Empty = new(new HashSet<byte[]>(ByteKeyComparer.Instance), []);
        private readonly HashSet<byte[]> _exact;
        private readonly HashSet<byte[]>.AlternateLookup<ReadOnlySpan<byte>> _lookup;
        private readonly byte[][] _prefixes;

        private Filters(HashSet<byte[]> exact, byte[][] prefixes)
        {
            _exact = exact;
            _lookup = exact.GetAlternateLookup<ReadOnlySpan<byte>>();
            _prefixes = prefixes;
        }

        public bool Matches(ReadOnlySpan<byte> topic)
        {
            if (_exact.Count > 0 && _lookup.Contains(topic))
            {
                return true;
            }

            foreach (byte[] p in _prefixes)
            {
                if (topic.StartsWith(p))
                {
                    return true;
                }
            }

            return false;
        }

        public IEnumerable<byte[]> AllFilters() => _exact.Concat(_prefixes);

        public Filters With(byte[] filter, bool prefix) => prefix
            ? new Filters(_exact, [.. _prefixes, filter])
            : new Filters(new HashSet<byte[]>(_exact.Append(filter), ByteKeyComparer.Instance), _prefixes);

        public Filters Without(byte[] filter, bool prefix)
        {
            if (prefix)
            {
                var rest = _prefixes.ToList();
                rest.RemoveAt(rest.FindIndex(p => p.AsSpan().SequenceEqual(filter)));
                return new Filters(_exact, [.. rest]);
            }

            var exact = new HashSet<byte[]>(_exact, ByteKeyComparer.Instance);
            exact.Remove(filter);
            return new Filters(exact, _prefixes);
        }
    }
}
