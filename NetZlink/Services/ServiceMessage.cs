using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace NetZlink.Services;

/// <summary>
/// One multipart message a <see cref="ZlinkGateway"/> or <see cref="ZlinkReceiver"/> received: the
/// peer's routing id and the parts, held in pooled buffers. Dispose it once when done: that gives
/// the object and its buffers back to the pool (so receiving allocates nothing per message). Do not
/// use it after that: until the pool hands the object out for a later message its routing id and
/// parts throw <see cref="ObjectDisposedException"/>; afterwards a reference kept past Dispose
/// reads the later message (copy what you need first).
/// </summary>
public sealed class ServiceMessage : IDisposable
{
    private static readonly ConcurrentQueue<ServiceMessage> Pool = new();
    private static int s_pooled;

    // Spares per thread, taken before the shared pool: a reader that disposes its messages on the
    // thread that receives them touches no shared state.
    [ThreadStatic]
    private static ServiceMessage?[]? s_spares;
    [ThreadStatic]
    private static int s_spareCount;

    /// <summary>Spares kept per thread (about 40 KiB of small messages at most).</summary>
    private const int SparesPerThread = 128;

    /// <summary>Buffers up to this size stay with a pooled message; larger ones go back to <see cref="ArrayPool{T}.Shared"/>.</summary>
    private const int KeptBytes = 4096;
    private const int KeptParts = 8;
    private byte[] _data = [];
    private int[] _ends = [];
    private int _length;
    private int _parts;
    private int _peerLength;
    private int _live;

    private ServiceMessage()
    {
    }

    /// <summary>On a gateway, the service the answering receiver belongs to; on a receiver, empty.</summary>
    public string Service { get; private set; } = "";

    /// <summary>The routing id of the peer that sent it: on a gateway, the receiver's; on a receiver, the gateway's (pass it to <see cref="ZlinkReceiver.Send(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> to answer).</summary>
    public ReadOnlySpan<byte> Peer
    {
        get
        {
            ThrowIfDisposed();
            return _data.AsSpan(0, _peerLength);
        }
    }

    /// <summary>The number of parts (frames) after the routing id.</summary>
    public int PartCount
    {
        get
        {
            ThrowIfDisposed();
            return _parts;
        }
    }

    /// <summary>Part <paramref name="index"/> (0-based).</summary>
    /// <param name="index">Which part.</param>
    public ReadOnlySpan<byte> this[int index] => GetPartMemory(index).Span;

    /// <summary>Part <paramref name="index"/> as memory (valid until the message is disposed).</summary>
    /// <param name="index">Which part.</param>
    public ReadOnlyMemory<byte> GetPartMemory(int index)
    {
        ThrowIfDisposed();
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(index, _parts);
        int start = index == 0 ? _peerLength : _ends[index - 1];
        return _data.AsMemory(start, _ends[index] - start);
    }

    /// <summary>The peer's routing id as a <see cref="RoutingId"/> (a copy).</summary>
    public RoutingId PeerId() => new(Peer);

    /// <summary>Gives the message (with its buffers) back to the pool. Dispose each message once, and do not use it afterwards.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _live, 0) == 0)
        {
            return;
        }

        // Small buffers stay with the object for its next use (no pool traffic per message);
        // large ones go back to the shared pool.
        if (_data.Length > KeptBytes)
        {
            ArrayPool<byte>.Shared.Return(_data);
            _data = [];
        }

        if (_ends.Length > KeptParts)
        {
            ArrayPool<int>.Shared.Return(_ends);
            _ends = [];
        }

        Service = "";
        ServiceMessage?[] spares = s_spares ??= new ServiceMessage?[SparesPerThread];
        if (s_spareCount < spares.Length)
        {
            spares[s_spareCount++] = this;
        }
        else if (Interlocked.Increment(ref s_pooled) <= 1024)
        {
            Pool.Enqueue(this);
        }
        else
        {
            Interlocked.Decrement(ref s_pooled);
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _live) == 0, this);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message
    internal static ServiceMessage Rent(string service, ReadOnlySpan<byte> peer)
    {
        ServiceMessage? m;
        if (s_spareCount > 0)
        {
            ServiceMessage?[] spares = s_spares!;
            m = spares[--s_spareCount]!;
            spares[s_spareCount] = null;
        }
        else if (Pool.TryDequeue(out m))
        {
            Interlocked.Decrement(ref s_pooled);
        }
        else
        {
            m = new ServiceMessage();
        }

        if (m._data.Length < peer.Length + 64)
        {
            m._data = new byte[Math.Max(256, peer.Length * 2)];
        }

        if (m._ends.Length == 0)
        {
            m._ends = new int[KeptParts];
        }

        m.Service = service;
        peer.CopyTo(m._data);
        m._peerLength = peer.Length;
        m._length = peer.Length;
        m._parts = 0;
        Volatile.Write(ref m._live, 1);
        return m;
    }

    /// <summary>A copy in buffers of its own (a SPOT message that goes to several subscribers).</summary>
    internal ServiceMessage Clone()
    {
        ThrowIfDisposed();
        ServiceMessage copy = Rent(Service, Peer);
        for (int i = 0; i < _parts; i++)
        {
            copy.AddPart(this[i]);
        }

        return copy;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)] // per message
    internal void AddPart(ReadOnlySpan<byte> part)
    {
        if (_length + part.Length > _data.Length)
        {
            byte[] bigger = ArrayPool<byte>.Shared.Rent(Math.Max(_data.Length * 2, _length + part.Length));
            _data.AsSpan(0, _length).CopyTo(bigger);
            ReturnOrDrop(_data, KeptBytes);
            _data = bigger;
        }

        if (_parts == _ends.Length)
        {
            int[] more = ArrayPool<int>.Shared.Rent(_ends.Length * 2);
            _ends.AsSpan(0, _parts).CopyTo(more);
            ReturnOrDrop(_ends, KeptParts);
            _ends = more;
        }

        part.CopyTo(_data.AsSpan(_length));
        _length += part.Length;
        _ends[_parts++] = _length;
    }

    /// <summary>A buffer outgrown: one from the shared pool (larger than what is kept) goes back to it; a kept-size one is left to the collector.</summary>
    private static void ReturnOrDrop<T>(T[] buffer, int kept)
    {
        if (buffer.Length > kept)
        {
            ArrayPool<T>.Shared.Return(buffer);
        }
    }
}
