// One connected peer of a STREAM socket (the only type with a peer table), copied out of zlink_peer_info_t.
using NetZlink.Interop;

namespace NetZlink;

/// <summary>A snapshot of one connected peer.</summary>
public sealed class PeerInfo
{
    internal unsafe PeerInfo(ZlinkPeerInfo* info)
    {
        RoutingId = new RoutingId(info->RoutingId.AsSpan().ToArray());
        RemoteAddress = Utf8Z.Decode(info->RemoteAddress, 256);
        ConnectedTimeMilliseconds = info->ConnectedTimeMs;
        MessagesSent = info->MessagesSent;
        MessagesReceived = info->MessagesReceived;
    }

    /// <summary>The peer's routing id.</summary>
    public RoutingId RoutingId { get; }

    /// <summary>The peer's address, e.g. <c>tcp://127.0.0.1:40412</c> (empty when unknown).</summary>
    public string RemoteAddress { get; }

    /// <summary>When the peer connected, as the native library's millisecond clock reports it.</summary>
    public ulong ConnectedTimeMilliseconds { get; }

    /// <summary>Messages sent to the peer.</summary>
    public ulong MessagesSent { get; }

    /// <summary>Messages received from the peer.</summary>
    public ulong MessagesReceived { get; }

    /// <inheritdoc/>
    public override string ToString() => $"{RoutingId} {RemoteAddress} sent={MessagesSent} received={MessagesReceived}";
}
