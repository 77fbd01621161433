// A connection as an IDuplexPipe, for protocol code that parses with PipeReader and writes with
// PipeWriter (EngineChannelOptions.ConnectionPipes).
//
// Input: the shard thread writes each packet into the input pipe and flushes. A flush that does
// not complete at once means the application has PipeCapacity bytes unread: the shard then stops
// reading (EngineShard.Pause.cs) until that flush completes, so a slow parser holds its peers back
// through TCP. Packets of the same read that arrive meanwhile are written without a flush and
// flushed from OnPass once the pending flush has completed.
//
// Output: a pump task moves what the application flushes into the output pipe to the engine with
// SendAsync (bounded, counted), and ends when the connection ends. With the default framer a post
// must be whole packets: the pump posts the whole packets at the front of what was flushed (in
// runs of at most SendQueueCapacityPerConnection bytes, or one packet alone when it is larger) and
// leaves a packet still being written in the pipe until its last byte is flushed: the pump has
// examined those bytes, and a Pipe holds a writer back only for bytes its reader has not
// examined, so a packet larger than PipeCapacity written in pieces never stalls its writer. A
// packet that can never be posted (an empty body) ends the output with that error, which the
// application's next flush throws.
using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;

namespace NetZlink.Engine;

internal sealed class ConnectionPipe : IDuplexPipe
{
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly StreamEngine _engine;
    private readonly EngineShard _shard;
    private readonly Connection _connection;
    private readonly byte[] _header = new byte[LengthPrefixFramer.Size];
    private int _flushPending;
    private int _ended;
    private int _inputCompleted;
    private bool _unflushed;

    public ConnectionPipe(StreamEngine engine, EngineShard shard, Connection connection, int capacity)
    {
        _engine = engine;
        _shard = shard;
        _connection = connection;
        _input = new Pipe(new PipeOptions(pauseWriterThreshold: capacity, resumeWriterThreshold: capacity / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pauseWriterThreshold: capacity, resumeWriterThreshold: capacity / 2, useSynchronizationContext: false));
    }

    public PipeReader Input => _input.Reader;

    public PipeWriter Output => _output.Writer;

    /// <summary>True while a flush waits for the application to read: the shard must not read on.</summary>
    public bool Blocked => Volatile.Read(ref _flushPending) != 0;

    /// <summary>Starts the output pump (after the Connected event was written).</summary>
    public void StartOutput() => _ = Task.Run(PumpOutput);

    /// <summary>Shard thread: one packet in; false when the shard must stop reading until the reader catches up.</summary>
    public bool Deliver(ReadOnlySpan<byte> packet)
    {
        _input.Writer.Write(packet);
        if (Blocked)
        {
            _unflushed = true;
            return false;
        }

        return Flush();
    }

    /// <summary>Shard thread, before it reads again: flushes what arrived while a flush was pending.</summary>
    public void FlushLeftover()
    {
        if (_unflushed && !Blocked)
        {
            _unflushed = false;
            _ = Flush();
        }
    }

    /// <summary>Shard thread: the connection ended; the reader sees the end after the bytes it has not read yet.</summary>
    public void End()
    {
        // Pairs with AwaitFlush: whichever of the two sees the other done completes the input (once).
        Interlocked.Exchange(ref _ended, 1);
        if (!Blocked)
        {
            CompleteInput();
        }

        _output.Reader.CancelPendingRead();
    }

    private void CompleteInput()
    {
        if (Interlocked.Exchange(ref _inputCompleted, 1) == 0)
        {
            // Commits bytes written without a flush, then the end.
            _input.Writer.Complete();
        }
    }

    private bool Flush()
    {
        ValueTask<FlushResult> flush = _input.Writer.FlushAsync(CancellationToken.None);
        if (flush.IsCompleted)
        {
            return true;
        }

        Volatile.Write(ref _flushPending, 1);
        _ = AwaitFlush(flush);
        return false;
    }

    private async Task AwaitFlush(ValueTask<FlushResult> flush)
    {
        try
        {
            _ = await flush.ConfigureAwait(false);
        }
        catch (InvalidOperationException)
        {
            // The reader completed the pipe: nothing more to wait for.
        }

        Interlocked.Exchange(ref _flushPending, 0);
        if (Volatile.Read(ref _ended) != 0)
        {
            CompleteInput();
        }

        _shard.RequestPass();
    }

    private async Task PumpOutput()
    {
        PipeReader reader = _output.Reader;
        Exception? failure = null;
        try
        {
            while (true)
            {
                ReadResult result = await reader.ReadAsync().ConfigureAwait(false);
                ReadOnlySequence<byte> buffer = result.Buffer;
                bool open = !result.IsCanceled;
                SequencePosition consumed = buffer.End;
                if (open && _engine.PacketFramed)
                {
                    (open, consumed) = await PostPacketsAsync(buffer).ConfigureAwait(false);
                }
                else
                {
                    foreach (ReadOnlyMemory<byte> segment in buffer)
                    {
                        if (!open)
                        {
                            break;
                        }

                        for (int at = 0; at < segment.Length && open; at += _engine.MaxPostLength)
                        {
                            open = await _engine.SendAsync(_connection, segment.Slice(at, Math.Min(_engine.MaxPostLength, segment.Length - at))).ConfigureAwait(false);
                        }
                    }
                }

                // What was looked at but not taken (the start of a packet) waits for more.
                reader.AdvanceTo(consumed, buffer.End);
                if (!open || result.IsCompleted || result.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (ArgumentException e)
        {
            // A packet the engine can never post: the application's next flush throws it.
            failure = e;
        }
        finally
        {
            // The application's next flush sees IsCompleted (or the failure).
            await reader.CompleteAsync(failure).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Default framer: posts the whole packets at the start of <paramref name="buffer"/>, in runs of at
    /// most <see cref="StreamEngine.MaxPostLength"/> bytes (a larger packet alone); returns whether the
    /// engine still takes posts and where the first packet not yet whole begins.
    /// </summary>
    /// <exception cref="ArgumentException">A packet can never be posted (from the post: an empty body).</exception>
    private async ValueTask<(bool Open, SequencePosition Consumed)> PostPacketsAsync(ReadOnlySequence<byte> buffer)
    {
        long max = _engine.MaxPostLength;
        long at = 0;
        long run = 0;
        while (true)
        {
            long left = buffer.Length - at;
            long packet = -1;
            if (left >= LengthPrefixFramer.Size)
            {
                buffer.Slice(at, LengthPrefixFramer.Size).CopyTo(_header);
                packet = LengthPrefixFramer.Size + (long)BinaryPrimitives.ReadUInt32BigEndian(_header);
            }

            bool whole = packet >= 0 && packet <= left;
            if (whole && (at + packet - run <= max || at == run))
            {
                at += packet;
                continue;
            }

            if (at > run)
            {
                if (!await SendAsync(buffer.Slice(run, at - run)).ConfigureAwait(false))
                {
                    return (false, buffer.GetPosition(run));
                }

                run = at;
            }

            if (!whole)
            {
                return (true, buffer.GetPosition(at));
            }
        }
    }

    /// <summary>Posts a run of whole packets, copied into one pooled array when it spans segments.</summary>
    private async ValueTask<bool> SendAsync(ReadOnlySequence<byte> frame)
    {
        if (frame.IsSingleSegment)
        {
            return await _engine.SendAsync(_connection, frame.First).ConfigureAwait(false);
        }

        byte[] joined = ArrayPool<byte>.Shared.Rent((int)frame.Length);
        try
        {
            frame.CopyTo(joined);
            return await _engine.SendAsync(_connection, joined.AsMemory(0, (int)frame.Length)).ConfigureAwait(false);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(joined);
        }
    }
}
