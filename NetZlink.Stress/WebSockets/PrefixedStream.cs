// The bytes an HTTP head read brought past the head's end, handed out before the stream's own:
// a peer may send its first frame in the same segment as the handshake's last line.
namespace NetZlink.Stress.WebSockets;

/// <summary>Reads <c>prefix</c> first, then <c>inner</c>; writes go straight to <c>inner</c>, which it owns.</summary>
internal sealed class PrefixedStream(ReadOnlyMemory<byte> prefix, Stream inner) : DuplexStream
{
    private ReadOnlyMemory<byte> _prefix = prefix;

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_prefix.IsEmpty)
        {
            return inner.ReadAsync(buffer, cancellationToken);
        }

        int n = Math.Min(buffer.Length, _prefix.Length);
        _prefix[..n].CopyTo(buffer);
        _prefix = _prefix[n..];
        return ValueTask.FromResult(n);
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
        inner.WriteAsync(buffer, cancellationToken);

    public override void Flush() => inner.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            inner.Dispose();
        }

        base.Dispose(disposing);
    }
}
