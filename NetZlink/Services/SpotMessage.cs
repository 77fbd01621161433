namespace NetZlink.Services;

/// <summary>
/// One message a <see cref="ZlinkSpotSubscriber"/> received: its topic and its parts, in pooled
/// buffers. Dispose it once when done (that gives the buffers back, so receiving allocates nothing
/// per message), and do not use it afterwards: until the pooled object under it is handed out for
/// a later message its parts throw <see cref="ObjectDisposedException"/>; afterwards it (and every
/// copy of this struct) reads the later message. Copy what you need before disposing.
/// </summary>
public readonly struct SpotMessage : IDisposable, IEquatable<SpotMessage>
{
    private readonly ServiceMessage? _message;

    internal SpotMessage(ServiceMessage message) => _message = message;

    /// <summary>The topic (its UTF-8 decoded; a topic seen often is one cached string).</summary>
    public string Topic => Inner.Service;

    /// <summary>The topic's bytes as they came on the wire.</summary>
    public ReadOnlySpan<byte> TopicUtf8 => Inner.Peer;

    /// <summary>The number of parts after the topic (at least one).</summary>
    public int PartCount => Inner.PartCount;

    /// <summary>Part <paramref name="index"/> (0-based).</summary>
    /// <param name="index">Which part.</param>
    public ReadOnlySpan<byte> this[int index] => Inner[index];

    /// <summary>Part <paramref name="index"/> as memory (valid until the message is disposed).</summary>
    /// <param name="index">Which part.</param>
    public ReadOnlyMemory<byte> GetPartMemory(int index) => Inner.GetPartMemory(index);

    internal ServiceMessage Inner => _message ?? throw new InvalidOperationException("a default SpotMessage holds no message");

    /// <summary>Gives the buffers back. Dispose each message once.</summary>
    public void Dispose() => _message?.Dispose();

    /// <inheritdoc/>
    public bool Equals(SpotMessage other) => ReferenceEquals(_message, other._message);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is SpotMessage other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => _message is null ? 0 : System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(_message);

    /// <summary>Whether two values are the same message.</summary>
    public static bool operator ==(SpotMessage left, SpotMessage right) => left.Equals(right);

    /// <summary>Whether two values are different messages.</summary>
    public static bool operator !=(SpotMessage left, SpotMessage right) => !left.Equals(right);
}
